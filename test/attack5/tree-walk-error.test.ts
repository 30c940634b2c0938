import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE, RawSession, INITIALIZE, SERVERS, addServer, alive, auditEvents, tempDir } from '../helpers/warden.js';

// Attack on the gate (docs/adr/0019-fast-launch.md): node is started before the package tree is digested. A
// tree the walk cannot read (here a directory nested past PATH_MAX, which lstat refuses with ENAMETOOLONG) makes
// the digest throw an error that is not a WardenError: run then ends with "internal error (please report)", exit
// 70, the client gets no answer, and the launch (which started, then killed, a node process) is not in the audit
// log. A hostile package can ship such a tree; so can a careless one.

let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-a5-tree-');
  home = path.join(dir, 'home');
});
// node's rmSync walks by absolute path and fails past PATH_MAX; rm(1) does not.
afterEach(() => void spawnSync('rm', ['-rf', dir]));

function treePackage(): string {
  const pkg = path.join(dir, 'pkg');
  fs.mkdirSync(path.join(pkg, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'deep', version: '1.0.0', type: 'module' }));
  fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(pkg, 'lib/rpc.mjs'));
  const server = path.join(pkg, 'server.mjs');
  fs.copyFileSync(path.join(SERVERS, 'basic.mjs'), server);
  return server;
}

describe('a package tree the digest walk cannot read', () => {
  it('is refused in-band and audited with the pid of the node it started, which is gone, and leaves no run record', async () => {
    const server = treePackage();
    addServer(home, 'deep', [NODE, server]);
    const name = 'd'.repeat(250);
    // Made one level at a time from inside (a relative mkdir and chdir never see the whole path), in a child
    // process, whose working directory is its own.
    const nest = `const fs = require('node:fs'); process.chdir(process.argv[1]); for (let i = 0; i < 18; i++) { fs.mkdirSync('${name}'); process.chdir('${name}'); } fs.writeFileSync('f', 'x');`;
    const made = spawnSync(NODE, ['-e', nest, path.join(dir, 'pkg')]);
    expect(made.status).toBe(0);

    const s = new RawSession(home, 'deep');
    s.send(INITIALIZE + '\n');
    const { code } = await s.exited;
    expect(s.stderr).not.toContain('internal error');
    expect(s.lines().length, `run answered the client nothing; stderr: ${s.stderr.slice(0, 200)}`).toBe(1);
    const answer = JSON.parse(s.lines()[0]?.toString() ?? '{}') as { error?: { data?: { code?: string } } };
    expect(answer.error?.data?.code).toBe('PACKAGE_TREE_INVALID');
    expect(code).toBe(3);
    const refusal = auditEvents(home).filter((e) => e.event === 'launch').at(-1);
    expect(refusal).toMatchObject({ decision: 'refuse', code: 'PACKAGE_TREE_INVALID' });
    expect(refusal?.pid).toBeTypeOf('number');
    expect(alive(refusal?.pid as number)).toBe(false);
    expect(fs.readdirSync(path.join(home, 'run')).filter((f) => f.endsWith('.json'))).toEqual([]);
  });
});
