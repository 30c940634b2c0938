import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SERVERS, WARDEN, tempDir } from '../helpers/warden.js';

// Careless operator: umask 000. The warden makes its files 0600/0700 explicitly; the lock directories
// proper-lockfile makes (FILE.lock) used to get the umask's mode, which the warden's own check then refused
// half-way through `add` (allowlist.json written, servers.json not). Locks are now made owner-only.

let dir: string;
beforeEach(() => (dir = tempDir('warden-a2-umask-')));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function underUmask000(home: string, args: string[]): ReturnType<typeof spawnSync> {
  return spawnSync('/bin/sh', ['-c', 'umask 000; exec "$@"', 'sh', process.execPath, WARDEN, '--home', home, ...args], { encoding: 'utf8', input: '' });
}

/** Every path under `root` that group or others could write. */
function writableByOthers(root: string): string[] {
  const out: string[] = [];
  for (const name of fs.readdirSync(root, { recursive: true }) as string[]) {
    const p = path.join(root, name);
    if ((fs.lstatSync(p).mode & 0o022) !== 0) out.push(name);
  }
  return out;
}

describe('umask 000', () => {
  it('adds, verifies and audits a server under umask 000, leaving nothing in the home that others could write', () => {
    const home = path.join(dir, 'home');
    const add = underUmask000(home, ['add', 'u', '--yes', '--', process.execPath, path.join(SERVERS, 'basic.mjs')]);
    expect(add.stderr).not.toContain('FILE_INSECURE');
    expect(add.status).toBe(0);
    const verify = underUmask000(home, ['verify', 'u']);
    expect(verify.stderr).toBe('');
    expect(verify.status).toBe(0);
    expect(writableByOthers(home)).toEqual([]);
  });
});
