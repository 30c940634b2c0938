import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, launchAndClose } from '../helpers/warden.js';
import { homeWithTwoServers } from '../helpers/run-template.js';

// docs/adr/0034-digest-cache-per-server.md: each server's digests are cached in a file of its own
// (cache/digests.ID.json), so that a launch reads its own server's entries and not every enrolled tree's.

let home: string;
const cacheFile = (id: string): string => path.join(home, 'cache', `digests.${id}.json`);
const entries = (id: string): Record<string, string> => (JSON.parse(fs.readFileSync(cacheFile(id), 'utf8')) as { entries: Record<string, string> }).entries;

beforeAll(() => {
  home = homeWithTwoServers();
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

const launches = (id: string): Promise<void> => launchAndClose(home, id);

describe('the digest cache, a file per server', () => {
  it("enrolling writes each server's digests to its own file, and a launch needs no other", async () => {
    expect(Object.keys(entries('one')).length).toBeGreaterThan(0);
    expect(Object.keys(entries('two')).length).toBeGreaterThan(0);
    // Server two's cache is garbage: server one still launches from its own, and two is refused, naming its file.
    fs.writeFileSync(cacheFile('two'), 'not json', { mode: 0o600 });
    await launches('one');
    const r = cli(home, ['run', 'two']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('FILE_NOT_JSON');
    expect(r.stderr).toContain(cacheFile('two'));
    fs.rmSync(cacheFile('two'));
    await launches('two');
    expect(Object.keys(entries('two')).length).toBeGreaterThan(0);
  });

  it('a launch that adds entries removes the single cache file of earlier releases', async () => {
    const legacy = path.join(home, 'cache', 'digests.json');
    fs.writeFileSync(legacy, '{"version":1,"entries":{}}\n', { mode: 0o600 });
    fs.rmSync(cacheFile('one'));
    await launches('one');
    expect(fs.existsSync(cacheFile('one'))).toBe(true);
    expect(fs.existsSync(legacy)).toBe(false);
  });
});
