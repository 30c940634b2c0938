import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli, tempDir } from '../helpers/warden.js';

// A lock holds every tool a server lists to a client offering roots, sampling and elicitation; a client offering
// none is listed fewer. Each count of locked tools says how many of them only such a client is listed, so "2
// tools locked" is not read against a client's listing of 1.

let home: string;
let added: ReturnType<typeof cli>;
beforeAll(() => {
  home = tempDir();
  added = cli(home, ['add', 'cond', '--yes', '--', NODE, path.join(SERVERS, 'world2/conditional-tools.mjs')]);
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

const ONLY = '1 of them listed only to a client offering roots, sampling or elicitation';

describe('a server with a tool listed only to clients offering sampling', () => {
  it('add says how many of the locked tools only such a client is listed', () => {
    expect(added.code, added.stderr + added.stdout).toBe(0);
    expect(added.stdout).toContain(`Locked 2 tools (${ONLY};`);
  });

  it('status says it in its table and in the detail of the server, and --json counts them', () => {
    const all = cli(home, ['status']);
    expect(all.stdout).toMatch(/\b2 tools \(1 conditional\)/);
    const one = cli(home, ['status', 'cond']);
    expect(one.stdout).toContain(`  lock      2 tools (${ONLY}), revision`);
    const json = JSON.parse(cli(home, ['status', 'cond', '--json']).stdout) as { servers: { id: string; lock: unknown }[] };
    expect(json.servers.find((s) => s.id === 'cond')?.lock).toMatchObject({ tools: 2, conditionalTools: 1 });
  });
});
