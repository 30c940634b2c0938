import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, SERVERS, addServer, cli, tempDir } from '../helpers/warden.js';

// Exit codes for a trust file that cannot be used (DESIGN "CLI", docs/operations.md): servers.json and
// allowlist.json are configuration (exit 2, invalid config) and tools.lock and warden.lock are lockfiles
// (exit 4), for every verb that reads them, `run` included; nothing is written on the way out.

let dir: string;
let template: string;
let n = 0;

beforeAll(() => {
  dir = tempDir();
  template = path.join(dir, 'template');
  addServer(template, 'b', [NODE, path.join(SERVERS, 'basic.mjs')]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A copy of the enrolled home with `file` cut short (no longer JSON) or replaced by `text`. */
function homeWith(file: string, text?: string): string {
  const home = path.join(dir, `h${++n}`);
  fs.cpSync(template, home, { recursive: true });
  const target = path.join(home, file);
  const bytes = fs.readFileSync(target);
  fs.writeFileSync(target, text ?? bytes.subarray(0, Math.floor(bytes.length / 2)));
  return home;
}

/** Every file of a home with its bytes, to show that a refused verb wrote nothing. */
function snapshot(home: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['servers.json', 'allowlist.json', 'tools.lock', 'warden.lock']) {
    const f = path.join(home, name);
    out[name] = fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '(none)';
  }
  return out;
}

const CLIENT_FILE = (): string => {
  const f = path.join(dir, `client-${++n}.json`);
  fs.writeFileSync(f, JSON.stringify({ mcpServers: { other: { command: NODE, args: [path.join(SERVERS, 'noisy.mjs')] } } }));
  return f;
};

const VERBS: [string, () => string[]][] = [
  ['run', () => ['run', 'b']],
  ['status', () => ['status']],
  ['verify', () => ['verify', 'b']],
  ['diff', () => ['diff', 'b']],
  ['pin', () => ['pin', 'b']],
  ['canary check', () => ['canary', 'check', 'b']],
  ['canary record', () => ['canary', 'record', 'b']],
  ['add', () => ['add', 'c', '--yes', '--', NODE, path.join(SERVERS, 'noisy.mjs')]],
  ['import', () => ['import', CLIENT_FILE(), '--yes']],
];

describe.each([
  ['servers.json', 2, 'FILE_NOT_JSON'],
  ['allowlist.json', 2, 'FILE_NOT_JSON'],
  ['tools.lock', 4, 'LOCK_INVALID'],
  ['warden.lock', 4, 'LOCK_INVALID'],
])('a truncated %s', (file, exit, code) => {
  it.each(VERBS)(`makes %s exit ${exit} with ${code}, naming the file, and write nothing`, (_verb, args) => {
    const home = homeWith(file);
    const before = snapshot(home);
    const r = cli(home, args(), { input: `${INITIALIZE}\n` });
    expect(r.code, r.stderr + r.stdout).toBe(exit);
    expect(r.stderr + r.stdout).toContain(code);
    expect(r.stderr + r.stdout).toContain(path.join(home, file));
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(snapshot(home)).toEqual(before);
  });
});

describe('run with an invalid trust file', () => {
  it('still answers the client: its initialize gets the refusal as a JSON-RPC error', () => {
    const home = homeWith('allowlist.json');
    const r = cli(home, ['run', 'b'], { input: `${INITIALIZE}\n` });
    expect(r.code).toBe(2);
    const answer = JSON.parse(r.stdout.trim()) as { id: number; error: { message: string; data: { code: string } } };
    expect(answer.id).toBe(1);
    expect(answer.error.data.code).toBe('FILE_NOT_JSON');
    expect(answer.error.message).toContain("(FILE_NOT_JSON): one of the warden's own files (servers.json, the allowlist, the locks) cannot be read or is not valid");
    expect(r.stderr).toContain('allowlist.json');
  });

  it('exits 2 for a schema error too (a value of the wrong type)', () => {
    const home = homeWith('servers.json', JSON.stringify({ version: 1, servers: { b: { command: NODE, args: 'basic.mjs' } } }));
    const r = cli(home, ['run', 'b'], { input: `${INITIALIZE}\n` });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('FILE_INVALID');
  });
});
