import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, alive, tempDir } from '../helpers/warden.js';
import { blockedAtGate } from '../helpers/gate.js';

// Attack on the gate (docs/adr/0019-fast-launch.md), which held: the script is changed while the server's node
// waits at the gate and the warden is still digesting the package tree. Whether the change lands before the
// script's digest (a refusal) or after it (the set carries the old stat key, and the guard refuses the load),
// none of the changed code may run.

const BIG = 512 * 1024 * 1024;

let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-a5-change-');
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));


describe('a script changed while its node waits at the gate', () => {
  it('never runs the changed code', async () => {
    const pkg = path.join(dir, 'pkg');
    fs.mkdirSync(path.join(pkg, 'lib'), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'gated', version: '1.0.0', type: 'module' }));
    fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(pkg, 'lib/rpc.mjs'));
    const server = path.join(pkg, 'server.mjs');
    fs.copyFileSync(path.join(SERVERS, 'basic.mjs'), server);
    const big = path.join(pkg, 'data.bin');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, BIG);
    addServer(home, 'gated', [NODE, server]);
    // Same content, new stat key: the tree is digested again (the window) and still matches the allowlist.
    const later = new Date(Date.now() + 5_000);
    fs.utimesSync(big, later, later);

    const marker = path.join(dir, 'changed-code-ran');
    const s = new RawSession(home, 'gated');
    s.send(INITIALIZE + '\n');
    const pid = await blockedAtGate(server, s);
    expect(pid).toBeTypeOf('number');
    fs.appendFileSync(server, `\nfs.writeFileSync(${JSON.stringify(marker)}, 'x');\n`);
    const { code } = await s.exited;
    expect(code).toBe(3);
    expect(fs.existsSync(marker)).toBe(false);
    expect(alive(pid as number)).toBe(false);
  });
});
