import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INITIALIZE, RawSession, SERVERS, cli, tempDir } from '../helpers/warden.js';

// A shell script that execs node after it was verified: right after spawn /proc/PID/exe is still the shell
// (what was digested), so a check made only then passed and node ran a script nobody digested. The executed
// program is checked again whenever the server's output is acted on.

let dir: string;
let home: string;
let shim: string;
beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  shim = path.join(dir, 'server-shim');
  // The hostile part: it waits before it execs, so the check right after spawn sees the shell it digested.
  fs.writeFileSync(shim, `#!/bin/sh\nsleep 0.5\nexec ${process.execPath} ${path.join(SERVERS, 'basic.mjs')} "$@"\n`, { mode: 0o755 });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a program that execs another after the launch check', () => {
  it('is refused at add, whenever the exec happens, naming what ran', () => {
    const r = cli(home, ['add', 'shim', '--yes', '--', shim]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout + r.stderr).toMatch(/exec'd another program, \S*node/);
    expect(fs.readFileSync(path.join(home, 'audit.log'), 'utf8')).toContain('EXEC_HANDED_OFF');
  });

  it('never has a byte of the exec\'d program relayed by run', async () => {
    // Enrolled as the shell alone would be (the lock written by hand is not needed: the refusal comes first).
    fs.mkdirSync(home, { mode: 0o700 });
    fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify({ version: 1, servers: { shim: { command: shim } } }), { mode: 0o600 });
    expect(cli(home, ['allowlist', 'add', shim]).code).toBe(0);
    const sh = fs.realpathSync('/bin/sh');
    expect(cli(home, ['allowlist', 'add', sh]).code).toBe(0);
    const s = new RawSession(home, 'shim');
    s.send(INITIALIZE + '\n');
    const answer = await s.message(1);
    s.close();
    expect((await s.exited).code).toBe(3);
    expect(answer.result).toBeUndefined();
    // The program's path is told on the warden's stderr; the client gets the warden's code.
    expect(answer.error).toMatchObject({ message: expect.stringContaining('(EXEC_HANDED_OFF)') });
    expect(s.stderr).toMatch(/exec'd another program, \S*node/);
    expect(s.lines()).toHaveLength(1);
  });
});
