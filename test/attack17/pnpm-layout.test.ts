import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { INITIALIZE, RawSession, SERVERS, addServer, perTestDirs } from '../helpers/warden.js';

// REGRESSION CHECK (module guard hands node the real path it checked, commit 22779f9): a server whose packages
// are reached through symlinks, as pnpm lays them out (node_modules/NAME -> .pnpm/NAME@1.0.0/node_modules/NAME),
// with a CommonJS package requiring its own dependency (a pnpm sibling), an ES module package, and a native addon.
// Node resolves such names to their real paths itself, so a module's __filename, its require.cache key and
// import.meta.url are what they are without the guard, and a package reached through two symlinks (from the
// server and from another package) is one module instance.
// FINDING (node 20): the preload's fs.fstatSync of its gate (fd 3, a socket) is the last stat node 20's
// fs.realpathSync sees: its loop reads the shared stat array for a path component it has cached and, finding
// "socket" there, stops resolving. So require() resolves a symlinked package to its symlinked name, not its real
// path: require.resolve answers otherwise than node alone, the require.cache key is the symlinked name while
// module.filename (handed the real path since 22779f9) is the real one, and a package reached through two
// symlinks is loaded twice (two instances). node 22 and 24 serve as node alone does. (--preserve-symlinks, where node keeps the symlinked
// names, is an option the warden refuses.)

const tmp = perTestDirs();

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** tmp.dir/work/pkg laid out as pnpm does; returns the server's script. */
function layout(): string {
  const pkg = path.join(tmp.dir, 'work/pkg');
  const store = path.join(pkg, 'node_modules/.pnpm');
  write(path.join(pkg, 'package.json'), JSON.stringify({ name: 'layout17', version: '1.0.0', type: 'module', dependencies: { dep: '1.0.0', 'dep-esm': '1.0.0', addon: '1.0.0', other: '1.0.0' } }));
  write(path.join(pkg, 'lib/rpc.mjs'), fs.readFileSync(path.join(SERVERS, 'lib/rpc.mjs'), 'utf8'));
  write(path.join(pkg, 'src/server.mjs'), fs.readFileSync(path.join(SERVERS, 'attack17/layout.mjs'), 'utf8'));
  const dep = path.join(store, 'dep@1.0.0/node_modules/dep');
  write(path.join(dep, 'package.json'), JSON.stringify({ name: 'dep', version: '1.0.0', main: 'index.js', dependencies: { peer: '1.0.0' } }));
  write(path.join(dep, 'index.js'), "module.exports = { filename: __filename, dirname: __dirname, peer: () => require('peer').name };\n");
  const peer = path.join(store, 'peer@1.0.0/node_modules/peer');
  write(path.join(peer, 'package.json'), JSON.stringify({ name: 'peer', version: '1.0.0', main: 'index.js' }));
  write(path.join(peer, 'index.js'), "module.exports = { name: 'peer' };\n");
  fs.symlinkSync('../../peer@1.0.0/node_modules/peer', path.join(store, 'dep@1.0.0/node_modules/peer'));
  const other = path.join(store, 'other@1.0.0/node_modules/other');
  write(path.join(other, 'package.json'), JSON.stringify({ name: 'other', version: '1.0.0', main: 'index.js', dependencies: { dep: '1.0.0' } }));
  write(path.join(other, 'index.js'), "module.exports = { dep: require('dep') };\n");
  fs.symlinkSync('../../dep@1.0.0/node_modules/dep', path.join(store, 'other@1.0.0/node_modules/dep'));
  const esm = path.join(store, 'dep-esm@1.0.0/node_modules/dep-esm');
  write(path.join(esm, 'package.json'), JSON.stringify({ name: 'dep-esm', version: '1.0.0', type: 'module', exports: './index.js' }));
  write(path.join(esm, 'index.js'), 'export const url = import.meta.url;\n');
  const addon = path.join(store, 'addon@1.0.0/node_modules/addon');
  write(path.join(addon, 'package.json'), JSON.stringify({ name: 'addon', version: '1.0.0', main: 'build/Release/addon.node' }));
  const src = path.join(tmp.dir, 'addon.c');
  fs.writeFileSync(src, 'void *napi_register_module_v1(void *env, void *exports) { (void)env; return exports; }\n');
  fs.mkdirSync(path.join(addon, 'build/Release'), { recursive: true });
  const cc = spawnSync('cc', ['-shared', '-fPIC', '-o', path.join(addon, 'build/Release/addon.node'), src], { encoding: 'utf8' });
  if (cc.status !== 0) throw new Error(`cc failed: ${cc.stderr}`);
  for (const name of ['dep', 'dep-esm', 'addon', 'other']) fs.symlinkSync(`.pnpm/${name}@1.0.0/node_modules/${name}`, path.join(pkg, 'node_modules', name));
  return path.join(pkg, 'src/server.mjs');
}

/** The server's answer to the probe, run by `node` alone (stdin kept open until it answers). */
function reference(node: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const p = spawn(node, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    const timer = setTimeout(() => p.kill('SIGKILL'), 20_000);
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('"id":2'));
      if (line !== undefined) {
        clearTimeout(timer);
        p.kill('SIGKILL');
        resolve(line);
      }
    });
    p.on('exit', () => resolve(out.split('\n').find((l) => l.includes('"id":2')) ?? ''));
    p.stdin.write(`${INITIALIZE}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'probe', arguments: {} } })}\n`);
  });
}

/** Runs the probe unguarded (the reference) and through the warden. */
async function probe(node: string, nodeArgs: string[]): Promise<{ reference: unknown; guarded: unknown; stderr: string }> {
  const server = layout();
  const refLine = await reference(node, [...nodeArgs, server]);
  addServer(tmp.home, 'layout', [node, ...nodeArgs, server]);
  const s = new RawSession(tmp.home, 'layout');
  try {
    s.send(INITIALIZE + '\n');
    await s.message(1);
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'probe', arguments: {} } }) + '\n');
    await s.until(() => s.proc.exitCode !== null || s.lines().length >= 2, 'the end of the server or its answer');
    const line = s.lines().map((l) => l.toString()).find((l) => l.includes('"id":2')) ?? '';
    s.close();
    await s.exited;
    const text = (l: string): unknown => (l ? (JSON.parse(l) as { result?: { content?: Array<{ text: string }> } }).result?.content?.[0]?.text : undefined);
    return { reference: text(refLine), guarded: text(line), stderr: s.stderr };
  } finally {
    s.proc.kill('SIGKILL');
  }
}

describe.each(GUARD_NODES)('a pnpm-style layout of symlinked packages, on %s', (_label, node) => {
  it('serves with symlinked CommonJS, ES module and native addon packages as node alone does: real paths from require.resolve, one instance of a package reached through two symlinks', async () => {
    const r = await probe(node, []);
    expect(r.reference).toMatch(/^\{/);
    expect(r.guarded, r.stderr).toBe(r.reference);
  });

});
