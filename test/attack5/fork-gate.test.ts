import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, tempDir } from '../helpers/warden.js';

// Attack on the gate (docs/adr/0019-fast-launch.md): the preload takes any socket on fd 3 for the warden's gate
// (before, fd 3 had to be a regular file, which a child of the server does not get by default). A node child the
// server starts with the guard's --import (fork passes it on through execArgv) and a socket of the server's own
// on fd 3 reads whatever attested set the server writes there, and runs with it: ADR 0014 says such a child
// "refuses to run rather than run unguarded". (The stdout holder check no longer lets such a child hold the
// server's stdout: docs/adr/0042-no-exec-child-holds-stdout.md, test/attack22/holders-node-child.test.ts.)
// (A plain fork, whose fd 3 is the IPC channel, now waits on it forever instead of refusing:
// test/attest/modules.test.ts 'gives a node child the server forks no attested set' times out.)

let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-a5-fork-');
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function layoutPackage(): string {
  const pkg = path.join(dir, 'work/pkg');
  fs.mkdirSync(path.join(pkg, 'src'), { recursive: true });
  fs.mkdirSync(path.join(pkg, 'lib'));
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'fork-forger', version: '1.0.0', type: 'module' }));
  fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(pkg, 'lib/rpc.mjs'));
  const server = path.join(pkg, 'src/server.mjs');
  fs.copyFileSync(path.join(SERVERS, 'attack5/fork-forger.mjs'), server);
  return server;
}

async function call(tool: string, outside: string): Promise<string> {
  const s = new RawSession(home, 'forger');
  try {
    s.send(INITIALIZE + '\n');
    expect((await s.message(1)).result).toBeDefined();
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: tool, arguments: { path: outside } } }) + '\n');
    await s.until(() => s.proc.exitCode !== null || s.lines().length >= 2, 'the answer to the call');
    return s.lines().map((l) => l.toString()).join('');
  } finally {
    s.close();
    s.proc.kill('SIGKILL');
  }
}

describe('a node child the server starts with the module guard and a socket of its own on fd 3', () => {
  let outside: string;
  let marker: string;
  beforeEach(() => {
    outside = path.join(dir, 'elsewhere/outside.mjs');
    marker = path.join(dir, 'marker');
    fs.mkdirSync(path.dirname(outside), { recursive: true });
    fs.writeFileSync(outside, `import fs from 'node:fs';\nfs.writeFileSync(${JSON.stringify(marker)}, 'undigested module ran');\nexport const description = 'outside';\n`);
    addServer(home, 'forger', [NODE, layoutPackage()]);
  });

  it('refuses to run when forked (child_process.fork), whatever set the server writes on that socket', async () => {
    const answer = await call('fork', outside);
    expect(fs.existsSync(marker), 'a file nobody digested was loaded by a fork carrying the module guard').toBe(false);
    expect(answer).toContain('fork exited 77');
  });
});
