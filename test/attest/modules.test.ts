import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkTemplate, copyTemplateHome, type TemplateSpec } from '../helpers/enrolled-template.js';
import { GUARD_NODES, IN_THREAD_NODES, threadNames } from '../helpers/nodes.js';
import { addServer, auditEvents, cli, connectClient, INITIALIZE, RawSession, refusedInitialize, ROOT, SERVERS, tempDir } from '../helpers/warden.js';
import { addServerWarm } from '../helpers/warm-digest.js';
import { wardenCopy } from '../helpers/warden-copy.js';

// Modules from outside the attested set (issue 10 §3): a node server may load only its script, its package
// tree and the modules recorded for it at enrollment. What it loaded at enrollment from outside its package is
// recorded, digested and allowlisted; anything else is refused by the warden's preload when it is loaded.

const NODE = process.execPath;
let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Lays out BASE/work/pkg (package.json, src/server.mjs from test/servers/outside/NAME, lib/rpc.mjs). */
function layoutPackage(fixture: string, base = dir): { pkg: string; server: string } {
  const pkg = path.join(base, 'work/pkg');
  fs.mkdirSync(path.join(pkg, 'src'), { recursive: true });
  fs.mkdirSync(path.join(pkg, 'lib'));
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'outside-fixture', version: '1.0.0', type: 'module' }));
  fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(pkg, 'lib/rpc.mjs'));
  const server = path.join(pkg, 'src/server.mjs');
  fs.copyFileSync(path.join(SERVERS, 'outside', fixture), server);
  return { pkg, server };
}

/** An ES module that appends `text` to `marker` when it is evaluated and exports it as a description. */
function writeModule(file: string, marker: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `import fs from 'node:fs';\nfs.appendFileSync(${JSON.stringify(marker)}, ${JSON.stringify(text)} + '\\n');\nexport const description = ${JSON.stringify(text)};\n`);
}

/** layoutPackage('lazy.mjs'), enrolled as 'lazy' once per run and node (test/helpers/enrolled-template.ts). */
const LAZY: TemplateSpec = { name: 'attest-modules-lazy', layout: (base) => layoutPackage('lazy.mjs', base).server, id: 'lazy' };

function markerText(marker: string): string {
  return fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '';
}

function serverEntry(id: string): { modules?: string[] } {
  return (JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')) as { servers: Record<string, { modules?: string[] }> }).servers[id] ?? {};
}

function allowlisted(kind: string): string[] {
  return (JSON.parse(fs.readFileSync(path.join(home, 'allowlist.json'), 'utf8')) as { entries: { kind: string; path: string }[] }).entries.filter((e) => e.kind === kind).map((e) => e.path);
}

// Recorded at enrollment by the guard in learn mode, on each node release it is tested on.
describe.each(GUARD_NODES)('modules a server loads at start-up from outside its package, on %s', (_label, node) => {
  it('records a relative import outside the package at add, and refuses the launch once that file changed', async () => {
    const { server } = layoutPackage('escape-relative.mjs');
    const outside = path.join(dir, 'work/outside.mjs');
    const marker = path.join(dir, 'marker');
    writeModule(outside, marker, 'Echoes its input');
    const added = addServerWarm(home, 'rel', [node, server]);
    expect(added.stdout).toContain(outside);
    expect(serverEntry('rel').modules).toEqual([outside]);
    expect(allowlisted('module')).toEqual([outside]);

    writeModule(outside, marker, 'POISONED');
    const r = await refusedInitialize(home, 'rel');
    expect(r.code).toBe(3);
    expect(r.error.data.code).toBe('DIGEST_MISMATCH');
    expect(r.session.stderr).toContain(`module ${outside} changed`);
    expect(markerText(marker)).not.toContain('POISONED');
  });

  it('records an import by absolute path, and refuses the launch once that file changed', async () => {
    const { server } = layoutPackage('escape-absolute.mjs');
    const outside = path.join(dir, 'elsewhere/abs.mjs');
    const marker = path.join(dir, 'marker');
    writeModule(outside, marker, 'Echoes its input');
    addServerWarm(home, 'abs', [node, server, outside]);
    expect(serverEntry('abs').modules).toEqual([outside]);

    writeModule(outside, marker, 'POISONED');
    const r = await refusedInitialize(home, 'abs');
    expect(r.error.data.code).toBe('DIGEST_MISMATCH');
    expect(r.session.stderr).toContain(outside);
    expect(markerText(marker)).not.toContain('POISONED');
  });

  it('follows a symlink inside the package that points outside it, attests its target, and refuses it changed', async () => {
    const { pkg, server } = layoutPackage('escape-symlink.mjs');
    const target = path.join(dir, 'elsewhere/real.mjs');
    const marker = path.join(dir, 'marker');
    writeModule(target, marker, 'Echoes its input');
    fs.symlinkSync(target, path.join(pkg, 'lib/linked.mjs'));
    const added = addServerWarm(home, 'sym', [node, server]);
    expect(added.stdout).toContain(target);
    expect(serverEntry('sym').modules).toEqual([target]);

    writeModule(target, marker, 'POISONED');
    const r = await refusedInitialize(home, 'sym');
    expect(r.error.data.code).toBe('DIGEST_MISMATCH');
    expect(r.session.stderr).toContain(target);
    expect(markerText(marker)).not.toContain('POISONED');
  });
});

// On each node release the guard is tested on: node 20 checks ES modules on its loader thread, node 22.15+ in
// the loading thread (docs/adr/0032-in-thread-module-hooks.md).
describe.each(GUARD_NODES)('modules loaded after start-up from outside the attested set, on %s', (_label, node) => {
  /** `laidOut`: a package of the test's own, enrolled here; without it, a copy of LAZY's template home. */
  async function lazyCall(tool: string, args: Record<string, unknown>, laidOut?: string): Promise<{ code: number | null; stderr: string; lines: string[] }> {
    const template = laidOut ? undefined : copyTemplateHome(LAZY, node, home);
    if (laidOut) addServerWarm(home, 'lazy', [node, path.join(laidOut, 'src/server.mjs')]);
    expect(serverEntry('lazy').modules ?? []).toEqual([]);
    const s = new RawSession(home, 'lazy');
    try {
      s.send(INITIALIZE + '\n');
      expect((await s.message(1)).result).toBeDefined();
      s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
      s.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: tool, arguments: args } }) + '\n');
      // Either the server is ended, or it answers (the module was loaded): then close the session.
      await s.until(() => s.proc.exitCode !== null || s.lines().length >= 2, 'the end of the server or its answer');
      s.close();
      const { code } = await s.exited;
      return { code, stderr: s.stderr, lines: s.lines().map((l) => l.toString()) };
    } finally {
      s.proc.kill('SIGKILL');
      if (template) checkTemplate(template);
    }
  }

  it('ends a server that imports a file outside the set after tools/list, before the file runs', async () => {
    const outside = path.join(dir, 'elsewhere/late.mjs');
    const marker = path.join(dir, 'marker');
    writeModule(outside, marker, 'late');
    const r = await lazyCall('import', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.lines.join('')).not.toContain('loaded: late');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`server 'lazy' tried to load ${outside}, which is outside its attested set`);
    const exit = auditEvents(home).filter((e) => e.event === 'exit').pop();
    expect(exit?.exitCode).toBe(77);
    expect(auditEvents(home).filter((e) => e.event === 'module_refused')).toEqual([expect.objectContaining({ server: 'lazy', module: outside, pid: exit?.pid })]);
    expect(r.stderr).toMatch(/mcp-warden ALERT module_refused server=lazy pid=\d+ module=/);
  });

  it('lets a server require() a CommonJS file of its set that starts with "#!" and mentions import and await', async () => {
    const { pkg } = layoutPackage('lazy.mjs');
    const file = path.join(pkg, 'lib/cjs/tool.js');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'lib/cjs/package.json'), '{}');
    fs.writeFileSync(file, `#!/usr/bin/env node\n// import and export are words here; await is used below\nmodule.exports = { description: 'plain commonjs' };\nasync function later() { await null; }\nvoid later;\n`);
    const r = await lazyCall('require', { path: file }, pkg);
    expect(r.lines.join('')).toContain('loaded: plain commonjs');
    expect(r.stderr).not.toContain('tried to load');
  });

  it('ends a server that requires a CommonJS file outside the set', async () => {
    const outside = path.join(dir, 'elsewhere/late.cjs');
    const marker = path.join(dir, 'marker');
    fs.mkdirSync(path.dirname(outside), { recursive: true });
    fs.writeFileSync(outside, `require('node:fs').appendFileSync(${JSON.stringify(marker)}, 'late\\n');\nmodule.exports = { description: 'late' };\n`);
    const r = await lazyCall('require', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`tried to load ${outside}, which is outside its attested set`);
  });

  it('refuses an import of a data: URL', async () => {
    const r = await lazyCall('data', {});
    expect(r.lines.join('')).not.toContain('loaded: from data');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/server 'lazy' tried to load data:text\/javascript,.*; only files of its attested set and node: built-ins may be loaded/);
  });

  it('ends a server whose worker thread imports a file outside the set', async () => {
    const outside = path.join(dir, 'elsewhere/late.mjs');
    const marker = path.join(dir, 'marker');
    writeModule(outside, marker, 'late');
    const r = await lazyCall('worker', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.lines.join('')).not.toContain('loaded: late');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`tried to load ${outside}, which is outside its attested set`);
  });

  it('ends a server that loads a native addon from outside the set with process.dlopen', async () => {
    const addon = path.join(dir, 'elsewhere/addon.node');
    fs.mkdirSync(path.dirname(addon), { recursive: true });
    fs.writeFileSync(addon, 'not really an addon');
    const r = await lazyCall('dlopen', { path: addon });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`server 'lazy' tried to load ${addon}, which is outside its attested set`);
  });

  it('ends a server that registers loader hooks of its own from a data: URL', async () => {
    const r = await lazyCall('register', {});
    expect(r.lines.join('')).not.toContain('registered');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/server 'lazy' tried to load data:text\/javascript,export async function load/);
  });

  it('ends a server that registers loader hooks of its own from a file outside the set, before that file runs', async () => {
    const hooks = path.join(dir, 'elsewhere/hooks.mjs');
    const marker = path.join(dir, 'marker');
    fs.mkdirSync(path.dirname(hooks), { recursive: true });
    fs.writeFileSync(hooks, `import fs from 'node:fs';\nfs.appendFileSync(${JSON.stringify(marker)}, 'hooks ran\\n');\nexport async function load(url, context, next) { return next(url, context); }\n`);
    const r = await lazyCall('hooksfile', { path: hooks });
    expect(markerText(marker)).toBe('');
    expect(r.lines.join('')).not.toContain('registered');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`server 'lazy' tried to load ${hooks}, which is outside its attested set`);
  });

  it('gives a node child the server forks no attested set, so the child refuses to run', async () => {
    const r = await lazyCall('fork', {});
    const answer = r.lines.find((l) => l.includes('"id":2')) ?? '';
    expect(answer).toContain('fork exited 77');
    expect(answer).toContain("started with the warden's module guard but file descriptor 3 is not the warden's attested set; it will not run");
    expect(answer).not.toContain('child ran');
  });

  it('ends a server that starts a worker thread from code to eval (it would run without the guard)', async () => {
    const outside = path.join(dir, 'elsewhere/late.mjs');
    const marker = path.join(dir, 'marker');
    writeModule(outside, marker, 'late');
    const r = await lazyCall('evalworker', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("server 'lazy' tried to load a worker thread from code to eval, which would run without the module guard");
  });
});

describe('the module guard on node 24 (module.registerHooks)', () => {
  // node 24 names its threads (a worker, such as the loader-hooks thread of module.register, is "WorkerThread");
  // node 22 names them all "node", so the thread itself is looked for on 24 only.
  const node = (IN_THREAD_NODES.find(([label]) => label === 'node 24') as [string, string])[1];
  it('checks loads in the server\'s own thread: node starts no loader-hooks thread for it', async () => {
    copyTemplateHome(LAZY, node, home);
    const s = new RawSession(home, 'lazy');
    try {
      s.send(INITIALIZE + '\n');
      expect((await s.message(1)).result).toBeDefined();
      // The server is the warden's one child (run writes its launch event to the audit log behind the session,
      // so the log may not hold it yet when the client has the result).
      const children = fs.readFileSync(`/proc/${s.proc.pid}/task/${s.proc.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      expect(children).toHaveLength(1);
      const threads = threadNames(children[0] as number);
      expect(threads).toContain('MainThread'); // node 22+ names its threads, so a loader thread would show
      expect(threads).not.toContain('WorkerThread');
    } finally {
      s.close();
      s.proc.kill('SIGKILL');
    }
  });
});

describe('the module guard itself', () => {
  // Every file the preload directory holds: a file of the guard missing from the warden's list would go unchecked.
  const guardFiles = fs.readdirSync(path.join(ROOT, 'dist/launch/preload')).filter((f) => f.endsWith('.js'));
  it.each(guardFiles)('is refused, naming the file, when %s of the guard no longer matches the digest recorded at build', async (file) => {
    // A private copy of the warden (dist, with the repository's node_modules), so its guard can be altered.
    const { main, alterable: hooks } = wardenCopy(path.join(dir, 'warden'), `launch/preload/${file}`);
    fs.appendFileSync(hooks, '\n// altered\n');
    const { server } = layoutPackage('lazy.mjs');
    const added = spawnSync(NODE, [main, '--home', home, 'add', 'g', '--yes', '--', NODE, server], { encoding: 'utf8', input: '' });
    expect(added.status).toBe(3);
    expect(added.stdout).toContain(`${hooks}, part of the warden's module guard that is loaded into every node server, has sha256`);
    const launch = auditEvents(home).filter((e) => e.event === 'launch').pop();
    expect(launch).toMatchObject({ decision: 'refuse', code: 'PRELOAD_INVALID' });
  });
});

describe('a bare script with sibling modules', () => {
  it('is enrolled with its siblings recorded and allowlisted, runs, and is refused once a sibling changed', async () => {
    const bare = path.join(dir, 'bare');
    fs.mkdirSync(bare);
    const server = path.join(bare, 'server.mjs');
    fs.copyFileSync(path.join(SERVERS, 'outside/bare-server.mjs'), server);
    fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(bare, 'rpc.mjs'));
    const sibling = path.join(bare, 'sibling.mjs');
    const marker = path.join(dir, 'marker');
    writeModule(sibling, marker, 'Echoes its input');

    const added = addServer(home, 'bare', [NODE, server]);
    expect(added.stdout).toContain(sibling);
    expect(serverEntry('bare').modules).toEqual([path.join(bare, 'rpc.mjs'), sibling]);
    expect(allowlisted('module')).toEqual([path.join(bare, 'rpc.mjs'), sibling]);

    const { client } = await connectClient(home, 'bare');
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.description)).toEqual(['Echoes its input']);
    } finally {
      await client.close();
    }
    expect(cli(home, ['status', 'bare']).code).toBe(0);

    writeModule(sibling, marker, 'POISONED');
    const r = await refusedInitialize(home, 'bare');
    expect(r.code).toBe(3);
    expect(r.error.data.code).toBe('DIGEST_MISMATCH');
    expect(r.session.stderr).toContain(`module ${sibling} changed`);
    expect(markerText(marker)).not.toContain('POISONED');
  });
});
