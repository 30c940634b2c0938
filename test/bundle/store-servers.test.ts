import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packFixture } from '../helpers/provenance-registry.js';
import { auditEvents, connectClient } from '../helpers/warden.js';
import { DEMO_DEP, DEMO_SERVER, entryOf, publishNewerDependency, publishRanged, storeMachines, storeNames, type StoreMachines } from './store-helpers.js';
import { member, readJson, type AllowlistJson, type BundleJson, type InstallJson, type ServersJson } from '../helpers/json-docs.js';

// Issue 15, servers installed into the sealed store (docs/adr/0029): machine A installs a package published with
// provenance, bundles it and signs; machine B applies the bundle, which installs the same package from the
// registry through install's own path into B's store, from the bundle's lockfile, and the server runs there.

const ENTRY = entryOf(DEMO_SERVER, '1.0.0', packFixture(DEMO_SERVER, '1.0.0'));
const storeOf = (home: string): string => fs.realpathSync(path.join(home, 'store'));

let m: StoreMachines;
let bundle: string;
beforeAll(async () => {
  m = await storeMachines('warden-store-bundle-');
  bundle = m.signed('demo', ['demo-server']);
}, 120_000);
afterAll(async () => m?.close());

describe('bundle apply: a server installed into the store', () => {
  let homeB: string;
  beforeAll(() => {
    homeB = m.freshB();
    const r = m.run(homeB, ['bundle', 'apply', bundle, '--key', m.key.pub]);
    if (r.code !== 0) throw new Error(`apply failed (${r.code}): ${r.stderr}`);
  }, 120_000);

  it('installs the package into this machine\'s store, with the tree digest the bundle names', () => {
    expect(storeNames(homeB)).toEqual([ENTRY]);
    const a = readJson<InstallJson>(path.join(m.homeA, 'store', ENTRY, 'install.json'));
    const b = readJson<InstallJson>(path.join(homeB, 'store', ENTRY, 'install.json'));
    expect(b.tree.sha256).toBe(a.tree.sha256);
    expect(b.tree.root).toBe(path.join(storeOf(homeB), ENTRY, 'node_modules', DEMO_SERVER));
    expect(b.provenance.identity).toMatchObject({ repository: a.provenance.identity?.repository, workflow: a.provenance.identity?.workflow });
    expect(b.dependencies.map((d) => `${d.name}@${d.version}`)).toEqual([`${DEMO_DEP}@1.0.0`]);
  });

  it('writes the server, its allowlist entries and its locks with this machine\'s store paths, equivalent to the other machine\'s', () => {
    const local = (home: string, file: string): string => fs.readFileSync(path.join(home, file), 'utf8').replaceAll(storeOf(home), '<store>');
    for (const f of ['tools.lock', 'warden.lock']) expect(local(homeB, f)).toBe(local(m.homeA, f));
    const server = member(readJson<ServersJson>(path.join(homeB, 'servers.json')).servers, 'demo-server');
    expect(server.args).toEqual([path.join(storeOf(homeB), ENTRY, 'node_modules', DEMO_SERVER, 'server.mjs')]);
    expect(server.package).toEqual(member(readJson<ServersJson>(path.join(m.homeA, 'servers.json')).servers, 'demo-server').package);
    expect(server.identity).toEqual(member(readJson<ServersJson>(path.join(m.homeA, 'servers.json')).servers, 'demo-server').identity);
    const entries = (home: string) => readJson<AllowlistJson>(path.join(home, 'allowlist.json')).entries.map((e) => ({ path: e.path.replace(storeOf(home), '<store>'), kind: e.kind, sha256: e.sha256 }));
    expect(entries(homeB)).toEqual(entries(m.homeA));
    const tree = readJson<AllowlistJson>(path.join(homeB, 'allowlist.json')).entries.find((e) => e.kind === 'package');
    expect(tree?.provenance).toMatchObject({ package: `${DEMO_SERVER}@1.0.0`, publisher: { repository: server.identity?.repository, workflow: server.identity?.workflow } });
  });

  it('the server runs on that machine from its own store, its dependency loaded', async () => {
    const { client } = await connectClient(homeB, 'demo-server');
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['add', 'echo']);
      expect((await client.callTool({ name: 'echo', arguments: { message: 'from B' } })).content).toEqual([{ type: 'text', text: 'Echo: from B' }]);
    } finally {
      await client.close();
    }
  });

  it('audits the install with the verified publisher, then the bundle', () => {
    const events = auditEvents(homeB);
    const installed = events.findIndex((e) => e.event === 'package_installed');
    expect(events[installed]).toMatchObject({ server: 'demo-server', package: DEMO_SERVER, version: '1.0.0', store: ENTRY, provenance: { repository: expect.stringContaining('demo-server') }, by: 'bundle apply' });
    expect(events[installed + 1]).toMatchObject({ event: 'bundle_applied', servers: ['demo-server'] });
  });

  it('the bundle names no path of the home that made it: re-created on the machine that applied it, it is the same bytes', () => {
    const text = fs.readFileSync(bundle, 'utf8');
    expect(text).not.toContain(m.homeA);
    expect(text).not.toContain(m.reg.url); // no registry URL: each machine uses its own
    expect(text).toContain(`"store:${ENTRY}/node_modules/${DEMO_SERVER}/server.mjs"`);
    const serial = String(readJson<BundleJson>(bundle).serial);
    const again = path.join(m.dir, 'again.bundle.json');
    expect(m.run(homeB, ['bundle', 'create', '--out', again, '--serial', serial]).code).toBe(0);
    const content = (file: string): string => fs.readFileSync(file, 'utf8').replace(/"createdAt": "[^"]+"/, '');
    expect(content(again)).toBe(content(bundle));
  });

  it('a later bundle reuses the intact store entry instead of installing again', () => {
    const before = fs.statSync(path.join(homeB, 'store', ENTRY)).ino;
    const next = m.signed('demo-next', ['demo-server']);
    const r = m.run(homeB, ['bundle', 'apply', next, '--key', m.key.pub]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`(${ENTRY}, already there)`);
    expect(fs.statSync(path.join(homeB, 'store', ENTRY)).ino).toBe(before);
  });
});

describe('bundle apply: the store lockfile', () => {
  it('pins the dependency versions of the machine that made the bundle, though the registry has newer ones', () => {
    publishRanged(m.reg, '1.2.0');
    const installed = m.run(m.homeA, ['install', `${DEMO_SERVER}@1.2.0`, '--id', 'ranged', '--yes']);
    expect(installed.code, installed.stderr).toBe(0);
    publishNewerDependency(m.reg);
    const file = m.signed('ranged', ['ranged']);
    const homeB = m.freshB();
    const r = m.run(homeB, ['bundle', 'apply', file, '--key', m.key.pub]);
    expect(r.code, r.stderr).toBe(0);
    const entry = storeNames(homeB)[0] as string;
    expect(readJson<{ version: string }>(path.join(homeB, 'store', entry, 'node_modules', DEMO_DEP, 'package.json')).version).toBe('1.0.0');
  }, 60_000);
});
