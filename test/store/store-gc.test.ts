import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT, WARDEN, cli, tempDir } from '../helpers/warden.js';

// `store gc` on a store laid out by hand as `install` lays it out (docs/formats.md, "store/"): entries with an
// install.json, sealed read-only, named or not by a server of servers.json, and half-made ".tmp-" directories.

const { entryName, seal } = (await import(path.join(ROOT, 'dist/store/package-store.js'))) as {
  entryName: (name: string, version: string, sri: string) => string;
  seal: (dir: string) => void;
};

let dir: string;
let home: string;
let store: string;
const children: ChildProcess[] = [];
beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  store = path.join(home, 'store');
  fs.mkdirSync(store, { recursive: true, mode: 0o700 });
  fs.chmodSync(home, 0o700);
});
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

const sri = (text: string): string => `sha512-${createHash('sha512').update(text).digest('base64')}`;

/** A completed entry as install leaves it: package.json, node_modules/<name>/, install.json; sealed if asked. */
function entry(name: string, version: string, opts: { sealed?: boolean; record?: string | null; verifiedAt?: string } = {}): { name: string; dir: string; integrity: string } {
  const integrity = sri(`${name}@${version}`);
  const e = entryName(name, version, integrity);
  const d = path.join(store, e);
  const pkg = path.join(d, 'node_modules', name);
  fs.mkdirSync(pkg, { recursive: true });
  fs.writeFileSync(path.join(d, 'package.json'), JSON.stringify({ private: true, dependencies: { [name]: version } }));
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name, version, bin: 'server.js' }));
  fs.writeFileSync(path.join(pkg, 'server.js'), '#!/usr/bin/env node\n'.padEnd(5000, '/'));
  fs.chmodSync(path.join(pkg, 'server.js'), 0o755);
  const record = {
    version: 1,
    package: { name, version, integrity },
    provenance: { unsigned: true, admittedBy: '--allow-unsigned' },
    verifiedAt: opts.verifiedAt ?? '2026-11-30T12:00:00.000Z',
    registry: 'https://registry.npmjs.org/',
    tree: { root: pkg, sha256: 'a'.repeat(64) },
    dependencies: [],
  };
  if (opts.record !== null) fs.writeFileSync(path.join(d, 'install.json'), opts.record ?? JSON.stringify(record, null, 2));
  if (opts.sealed) seal(d);
  return { name: e, dir: d, integrity };
}

/** A half-made entry (an install's work directory), last changed `ageMs` ago. */
function halfMade(name: string, ageMs: number): string {
  const d = path.join(store, name);
  fs.mkdirSync(path.join(d, 'node_modules'), { recursive: true });
  fs.writeFileSync(path.join(d, 'package.json'), '{}');
  const t = new Date(Date.now() - ageMs);
  fs.utimesSync(d, t, t);
  return d;
}

function writeServers(servers: Record<string, unknown>): void {
  fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify({ version: 1, servers }, null, 2), { mode: 0o600 });
}

const inStore = (): string[] => fs.readdirSync(store).sort();

describe('store gc', () => {
  it('removes exactly the unreferenced entries and the half-made ones older than an hour; --dry-run removes nothing', () => {
    const named = entry('named-server', '1.0.0', { sealed: true });
    const unnamed = entry('old-server', '0.9.0', { sealed: true });
    const alsoUnnamed = entry('@scope/other', '2.1.0');
    writeServers({
      named: { command: '/usr/bin/env', args: [path.join(named.dir, 'node_modules/named-server/server.js')], package: { name: 'named-server', version: '1.0.0', integrity: named.integrity, store: named.name } },
    });
    halfMade('.tmp-abandoned', 2 * 3600 * 1000);
    halfMade('.tmp-in-progress', 60 * 1000);
    const before = inStore();

    const dry = cli(home, ['store', 'gc', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(new RegExp(`would remove\\s+${unnamed.name.replace(/[.+]/g, '\\$&')}\\s+\\d+(\\.\\d)? KiB\\s+no server names it`));
    expect(dry.stdout).toMatch(/would remove\s+\.tmp-abandoned\s+\d+ B\s+half-made, older than an hour/);
    expect(dry.stdout).toMatch(new RegExp(`kept\\s+${named.name.replace(/[.+]/g, '\\$&')}\\s+named by server named`));
    expect(dry.stdout).toMatch(/kept\s+\.tmp-in-progress\s+being made \(1 min old/);
    expect(dry.stdout).toContain('(--dry-run: nothing was removed)');
    expect(inStore()).toEqual(before);

    const r = cli(home, ['store', 'gc']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`removed\\s+${unnamed.name.replace(/[.+]/g, '\\$&')}\\s+\\d+(\\.\\d)? KiB`));
    expect(r.stdout).toMatch(/Freed \d+(\.\d)? KiB in 3 entries\./);
    expect(inStore()).toEqual([named.name, '.tmp-in-progress'].sort());
    expect(before).toContain(alsoUnnamed.name);
    // The named entry is untouched, still sealed.
    expect(fs.statSync(named.dir).mode & 0o222).toBe(0);

    const again = cli(home, ['store', 'gc']);
    expect(again.stdout).toContain(`Nothing to remove in ${store}.`);
  });

  it('keeps an entry no server names yet for an hour after its install (an import names its entries after asking)', () => {
    const fresh = entry('just-installed', '1.0.0', { sealed: true, verifiedAt: new Date(Date.now() - 5 * 60_000).toISOString() });
    const old = entry('long-ago', '1.0.0', { sealed: true, verifiedAt: new Date(Date.now() - 2 * 3600_000).toISOString() });
    writeServers({});
    const r = cli(home, ['store', 'gc']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`kept\\s+${fresh.name.replace(/[.+]/g, '\\$&')}\\s+installed 5 min ago`));
    expect(inStore()).toEqual([fresh.name]);
    expect(inStore()).not.toContain(old.name);
  });

  it('reports, and never removes, an entry whose install.json is missing or invalid', () => {
    const missing = entry('no-record', '1.0.0', { record: null });
    const invalid = entry('bad-record', '1.0.0', { record: '{"version": 1, "version": 2}' });
    const wrongShape = entry('wrong-record', '1.0.0', { record: '{"version": 1}' });
    writeServers({});
    const r = cli(home, ['store', 'gc']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`not an entry: ${missing.name}: no install.json`);
    expect(r.stdout).toContain(`not an entry: ${invalid.name}: FILE_NOT_JSON`);
    expect(r.stdout).toContain(`not an entry: ${wrongShape.name}: FILE_INVALID`);
    expect(r.stdout).toContain('Nothing to remove');
    expect(inStore()).toEqual([missing.name, invalid.name, wrongShape.name].sort());
  });

  it('keeps an entry no server names while a process runs from it (a session started before an upgrade)', () => {
    const running = entry('still-running', '1.0.0', { sealed: true });
    writeServers({});
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { cwd: running.dir, stdio: 'ignore' });
    children.push(child);
    const r = cli(home, ['store', 'gc']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`kept\\s+${running.name}\\s+run from by pid ${child.pid}`));
    expect(inStore()).toEqual([running.name]);
  });

  it('refuses to run when servers.json is invalid: it could not know which entries are named', () => {
    const e = entry('some-server', '1.0.0');
    fs.writeFileSync(path.join(home, 'servers.json'), '{"version": 1, "servers": {"x": {}}}', { mode: 0o600 });
    const r = cli(home, ['store', 'gc']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('FILE_INVALID');
    expect(r.stderr).toContain('servers.json');
    expect(inStore()).toEqual([e.name]);
  });

  it('waits for the store lock an install holds, so the entry it is creating survives', async () => {
    writeServers({});
    // An install as install.ts does it: under withStoreLock, create the entry, then name it in servers.json.
    const holder = path.join(dir, 'install-like.mjs');
    fs.writeFileSync(
      holder,
      `import fs from 'node:fs';
import path from 'node:path';
const { withStoreLock } = await import(${JSON.stringify(path.join(ROOT, 'dist/store/package-store.js'))});
const { resolveHome } = await import(${JSON.stringify(path.join(ROOT, 'dist/store/paths.js'))});
const { updateServers, newServerConfig } = await import(${JSON.stringify(path.join(ROOT, 'dist/store/servers.js'))});
const [home, src, name, integrity] = process.argv.slice(2);
const paths = resolveHome(home);
await withStoreLock(paths, async () => {
  fs.cpSync(src, path.join(paths.storeDir, name), { recursive: true });
  process.stdout.write('created\\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  await updateServers(paths, (f) => { f.servers.fresh = newServerConfig({ command: '/bin/true', package: { name: 'fresh-server', version: '1.0.0', integrity, store: name } }); });
});
process.stdout.write('released\\n');
`,
    );
    const made = entry('fresh-server', '1.0.0');
    const staged = path.join(dir, 'staged');
    fs.renameSync(made.dir, staged);
    const install = spawn(process.execPath, [holder, home, staged, made.name, made.integrity], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(install);
    let out = '';
    await new Promise<void>((resolve, reject) => {
      install.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('created\n')) resolve();
      });
      install.once('exit', (code) => reject(new Error(`the install stand-in exited (${code}) early`)));
    });
    // gc starts while the entry exists and servers.json does not name it yet: it must wait for the lock.
    const gc = spawn(process.execPath, [WARDEN, '--home', home, 'store', 'gc'], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(gc);
    let gcOut = '';
    let gcErr = '';
    gc.stdout?.on('data', (d: Buffer) => (gcOut += d.toString()));
    const gcExit = new Promise<number | null>((resolve) => gc.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      gc.stderr?.on('data', (d: Buffer) => {
        gcErr += d.toString();
        if (gcErr.includes('waiting for the lock')) resolve();
      });
      gc.once('exit', () => resolve());
    });
    expect(gcErr).toContain(`mcp-warden: waiting for the lock of ${store} (an install or another gc holds it)`);
    expect(inStore()).toEqual(['.lock.lock', made.name]); // the install's lock, and its entry: gc waits
    install.stdin?.write('go\n');
    expect(await gcExit).toBe(0);
    expect(gcOut).toMatch(new RegExp(`kept\\s+${made.name}\\s+named by server fresh`));
    expect(inStore()).toEqual([made.name]);
  });
});
