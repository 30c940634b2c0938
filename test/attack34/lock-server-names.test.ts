import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, tempDir } from '../helpers/warden.js';

// Issue 26, eleventh closing review (class b: one escaper). tools.lock is a file teams commit and share with other
// surfacelock tools (DESIGN.md: "verify mcp-warden's lock with another tool in CI"), and its v1 format does not
// restrict what a server's name is. `verify` with no ids and `scan --all` take the server names from tools.lock's
// keys and print them as they are: a name holding a terminal escape and a line end forges the warden's own lines.

const GOLDEN = path.resolve(import.meta.dirname, '../fixtures/surfaces/golden.tools.lock');
const FORGED = 'x\u001b[31mred\u001b[0m\nmcp-warden: every server verified';

let dir = '';
let home = '';
beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  fs.mkdirSync(home, { mode: 0o700 });
  const golden = JSON.parse(fs.readFileSync(GOLDEN, 'utf8')) as { servers: Record<string, unknown> };
  const entry = Object.values(golden.servers)[0];
  fs.writeFileSync(path.join(home, 'tools.lock'), JSON.stringify({ lockfile_version: 1, servers: { [FORGED]: entry } }, null, 2) + '\n', { mode: 0o600 });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const RAW = /[\u0000-\u0009\u000b-\u001f\u007f]/;

describe('server names read from tools.lock', () => {
  it('verify with no ids prints each server name of tools.lock through the one escaper (no raw escape, no forged line)', () => {
    const r = cli(home, ['verify']);
    expect(r.code, r.stderr).toBe(2); // the server is not in servers.json: SERVER_UNKNOWN
    expect(r.stdout).toContain('SERVER_UNKNOWN');
    expect(r.stdout).not.toMatch(RAW);
    expect(r.stdout.split('\n').some((l) => l.startsWith('mcp-warden: every server verified'))).toBe(false);
  });

  it('scan --all prints each server name of tools.lock through the one escaper (no raw escape, no forged line)', () => {
    const r = cli(home, ['scan', '--all']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('no findings');
    expect(r.stdout).not.toMatch(RAW);
    expect(r.stdout.split('\n').some((l) => l.startsWith('mcp-warden: every server verified'))).toBe(false);
  });
});
