import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, launchAndClose } from '../helpers/warden.js';
import { homeWithTwoServers } from '../helpers/run-template.js';

// docs/adr/0035-lock-entries-cached-per-server.md: `run ID` parses only ID's entries of tools.lock and warden.lock
// while both files are the very bytes it validated whole before (cache/locks.ID.json, keyed by their SHA-256);
// any change to either file makes the next launch validate both whole again.

let home: string;
const cacheFile = (id: string): string => path.join(home, 'cache', `locks.${id}.json`);
const toolsLock = (): string => path.join(home, 'tools.lock');

beforeAll(() => {
  home = homeWithTwoServers();
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

const launches = (id: string): Promise<void> => launchAndClose(home, id);

describe("a launch's lock entries", () => {
  it('are remembered as a lock of the one server, under the SHA-256 of the files validated whole', async () => {
    fs.rmSync(cacheFile('one'), { force: true });
    await launches('one');
    const cached = JSON.parse(fs.readFileSync(cacheFile('one'), 'utf8')) as { tools: { sha256: string; lock: string }; warden: { sha256: string; lock: string } };
    expect(Object.keys((JSON.parse(cached.tools.lock) as { servers: object }).servers)).toEqual(['one']);
    expect(Object.keys((JSON.parse(cached.warden.lock) as { servers: object }).servers)).toEqual(['one']);
    expect(cached.tools.sha256).toBe(createHash('sha256').update(fs.readFileSync(toolsLock())).digest('hex'));
    await launches('one'); // from the cache
  });

  it("are read whole for an id that is no server's, and nothing is remembered for it", () => {
    const r = cli(home, ['run', 'nosuch']);
    expect(r.code).not.toBe(0);
    expect(fs.existsSync(cacheFile('nosuch'))).toBe(false);
  });

  it("are not taken from the cache once tools.lock changed: another server's corrupt entry refuses the launch again", async () => {
    await launches('one');
    expect(fs.existsSync(cacheFile('one'))).toBe(true);
    const text = fs.readFileSync(toolsLock(), 'utf8');
    const doc = JSON.parse(text) as { servers: Record<string, { surface_hash: string }> };
    const good = (doc.servers.two as { surface_hash: string }).surface_hash;
    // Rewritten in place (same inode, same size): only mtime and ctime tell.
    const bad = good.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
    fs.writeFileSync(toolsLock(), text.replace(good, bad));
    try {
      const r = cli(home, ['run', 'one']);
      expect(r.code).toBe(4);
      expect(r.stderr).toContain('LOCK_INVALID');
      expect(r.stderr).toContain(toolsLock());
    } finally {
      fs.writeFileSync(toolsLock(), text);
    }
    await launches('one');
  });

  it('refuse a lock cache another user owns, for every command', () => {
    const file = cacheFile('two');
    fs.writeFileSync(file, '{}\n', { mode: 0o600 });
    fs.chownSync(file, 65534, 65534);
    try {
      for (const args of [['run', 'one'], ['status']]) {
        const r = cli(home, args);
        expect(r.code).toBe(2);
        expect(r.stderr).toContain('FILE_INSECURE');
        expect(r.stderr).toContain(file);
      }
    } finally {
      fs.rmSync(file);
    }
  });
});
