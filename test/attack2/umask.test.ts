import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SERVERS, WARDEN, tempDir } from '../helpers/warden.js';

// Careless operator: umask 000. The warden makes its files 0600/0700 explicitly, but the lock directories
// proper-lockfile makes (FILE.lock) get the umask's mode; the warden's own check then refuses them, half-way
// through `add`: allowlist.json was already written, servers.json is not. Not a bypass (it fails closed); a
// robustness finding: the lock of a file in the owner-only home should be made owner-only, or not checked.

let dir: string;
beforeEach(() => (dir = tempDir('warden-a2-umask-')));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('umask 000', () => {
  it('FINDING: add under umask 000 fails on its own lock directory, leaving allowlist entries for a server that was not added (should succeed)', () => {
    const home = path.join(dir, 'home');
    const r = spawnSync('/bin/sh', ['-c', 'umask 000; exec "$@"', 'sh', process.execPath, WARDEN, '--home', home, 'add', 'u', '--yes', '--', process.execPath, path.join(SERVERS, 'basic.mjs')], { encoding: 'utf8', input: '' });
    expect(r.stderr).not.toContain('FILE_INSECURE');
    expect(r.status).toBe(0);
  });
});
