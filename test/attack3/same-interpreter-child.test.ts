import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/warden.js';
import { PY_SERVER, SH_SERVER, enrollByHand, initializeThroughWarden } from './common.js';

// The stdout-holder check passes any process that executes the digested inode ("a fork of it"). For a script
// named on an interpreter's command line, that inode is the interpreter's: a digested launcher script that runs
// the same interpreter on another, undigested script (without exec, or with it) has that script speak to the
// client, while `sh start.sh` running node without exec is stopped (test/launch/forking-wrapper.test.ts).
// docs/threat-model.md: "the programs it runs (a program it execs is refused as EXEC_HANDED_OFF; one it forks
// is stopped if it holds the server's stdout, STREAM_HELD_ELSEWHERE…)".

const PYTHON = '/usr/bin/python3';
let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-attack3-same-');
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The inner server, never digested, and a marker it leaves when it runs. */
function inner(fixture: string, name: string): string {
  const file = path.join(dir, name);
  fs.copyFileSync(fixture, file);
  return file;
}

describe('a digested launcher script that runs the same interpreter on an undigested script', () => {
  it('`sh start.sh` whose start.sh runs `sh inner.sh` (no exec): inner.sh\'s answers are never relayed', async () => {
    const start = path.join(dir, 'start.sh');
    fs.writeFileSync(start, `sh ${inner(SH_SERVER, 'inner.sh')}\n`);
    enrollByHand(home, 'shsh', 'sh', [start], [fs.realpathSync('/bin/sh'), start]);
    const out = await initializeThroughWarden(home, 'shsh');
    expect(out.first.result, 'the undigested inner.sh answered initialize through the warden').toBeUndefined();
    expect(out.code).toBe(3);
  });

  it('`sh start.sh` whose start.sh runs `exec sh inner.sh`: refused (EXEC_HANDED_OFF or stopped), never relayed', async () => {
    const start = path.join(dir, 'start.sh');
    fs.writeFileSync(start, `exec sh ${inner(SH_SERVER, 'inner.sh')}\n`);
    enrollByHand(home, 'shx', 'sh', [start], [fs.realpathSync('/bin/sh'), start]);
    const out = await initializeThroughWarden(home, 'shx');
    expect(out.first.result, 'the undigested inner.sh answered initialize through the warden').toBeUndefined();
    expect(out.code).toBe(3);
  });

  it('`python3 launcher.py` running `subprocess.call([sys.executable, "inner.py"])`: inner.py\'s answers are never relayed', async () => {
    const launcher = path.join(dir, 'launcher.py');
    fs.writeFileSync(launcher, `import subprocess, sys\nsys.exit(subprocess.call([sys.executable, ${JSON.stringify(inner(PY_SERVER, 'inner.py'))}]))\n`);
    enrollByHand(home, 'pypy', PYTHON, [launcher], [fs.realpathSync(PYTHON), launcher]);
    const out = await initializeThroughWarden(home, 'pypy');
    expect(out.first.result, 'the undigested inner.py answered initialize through the warden').toBeUndefined();
    expect(out.code).toBe(3);
  });

  it('`python3 launcher.py` running `os.execv(sys.executable, [..., "inner.py"])`: refused, never relayed', async () => {
    const launcher = path.join(dir, 'launcher.py');
    fs.writeFileSync(launcher, `import os, sys\nos.execv(sys.executable, [sys.executable, ${JSON.stringify(inner(PY_SERVER, 'inner.py'))}])\n`);
    enrollByHand(home, 'pyx', PYTHON, [launcher], [fs.realpathSync(PYTHON), launcher]);
    const out = await initializeThroughWarden(home, 'pyx');
    expect(out.first.result, 'the undigested inner.py answered initialize through the warden').toBeUndefined();
    expect(out.code).toBe(3);
  });
});
