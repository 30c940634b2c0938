import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli, tempDir } from '../helpers/warden.js';
import { enrollByHand, initializeThroughWarden } from './common.js';

// The dynamic loader is a program too: `ld-linux-x86-64.so.2 PROGRAM ARGS` maps PROGRAM into its own process
// and runs it, with no exec. The warden digests the loader; /proc/PID/exe stays the loader (so the exec check
// passes), the only process holding the stdout is that one (so the holder check passes), and the program it
// runs, here node with a script, is neither digested nor module-guarded. It is a wrapper no list names and the
// structural check cannot see. (`--preload LIB` on its command line is LD_PRELOAD by another name.)

const LOADER = ['/lib64/ld-linux-x86-64.so.2', '/lib/ld-linux-aarch64.so.1'].find((p) => fs.existsSync(p));
let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-attack3-ld-');
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!LOADER)('the dynamic loader as the command', () => {
  it('`ld-linux-x86-64.so.2 node server.mjs` is refused at add as WRAPPER_COMMAND', () => {
    const r = cli(home, ['add', 'ld', '--yes', '--', LOADER as string, NODE, path.join(SERVERS, 'basic.mjs')]);
    expect(r.stderr).toContain('WRAPPER_COMMAND');
    expect(r.code).toBe(3);
  });

  it('`ld-linux-x86-64.so.2 node server.mjs`: the undigested, unguarded node server never answers through run', async () => {
    const server = path.join(SERVERS, 'basic.mjs');
    enrollByHand(home, 'ld', LOADER as string, [NODE, server], [LOADER as string]);
    const out = await initializeThroughWarden(home, 'ld');
    expect(out.first.result, 'node, run by the loader in-process, answered initialize through the warden').toBeUndefined();
    expect(out.code).toBe(3);
  });
});
