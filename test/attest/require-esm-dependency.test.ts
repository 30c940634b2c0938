import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES, IN_THREAD_NODES } from '../helpers/nodes.js';
import { addServerWarm, warmNodeDigest } from '../helpers/warm-digest.js';
import { cli, perTestDirs } from '../helpers/warden.js';
import { layoutServerPackage, loaderCall, loaderSession, markerText, outsideEsm, type CallOutcome } from '../attack13/loader-session.js';

// Issue 28, item 1: a server whose dependency ships require.mjs for require() (the shape of the npm package
// async-function, which @upstash/context7-mcp, @wonderwhy-er/desktop-commander and mcp-server-kubernetes load)
// is enrolled and runs under the module guard on every node release it is tested on. Where node loads a
// require()d ES module's imports past the guard (node 20), the warden turns require(esm) off, so node resolves
// the package to its CommonJS index.js; where the guard's hook runs in the loading thread (22.15+, 24), the ES
// module and its import are checked as they load (docs/adr/0049-require-esm-on-node-20.md).

const tmp = perTestDirs();

const DEP = 'test/servers/i28';

/** The server (src/server.mjs) with sync-dep installed as its dependency, both in its package tree. */
function layoutSyncDepUser(dir: string, writes: Record<string, string> = {}): string {
  return layoutServerPackage(dir, {
    name: 'sync-dep-user',
    server: 'i28/sync-dep-user.mjs',
    copies: {
      'node_modules/sync-dep/package.json': 'i28/sync-dep-package.json',
      'node_modules/sync-dep/index.js': 'i28/sync-dep-index.js',
      'node_modules/sync-dep/index.mjs': 'i28/sync-dep-index.mjs',
      'node_modules/sync-dep/require.mjs': 'i28/sync-dep-require.mjs',
    },
    writes: { 'package.json': JSON.stringify({ name: 'sync-dep-user', version: '1.0.0', type: 'module', dependencies: { 'sync-dep': '1.0.0' } }), ...writes },
  });
}

/** The nodes whose guard checks what a require()d ES module imports (in the loading thread); on the others (node
 *  20, the one running the tests) the warden runs node with require(esm) off: no "module-sync", ERR_REQUIRE_ESM. */
const IN_THREAD = new Set(['node 22', 'node 24']);
const VIA = (label: string): string => (IN_THREAD.has(label) ? 'require.mjs' : 'index.js');

/** A call of `requireesm` that loads `inner` (lib/inner.mjs of the package, with `writes` beside it). */
async function requireInner(node: string, inner: string, writes: Record<string, string> = {}, nodeOptions: string[] = []): Promise<CallOutcome> {
  const server = layoutSyncDepUser(tmp.dir, { 'lib/inner.mjs': inner, ...writes });
  addServerWarm(tmp.home, 'loader', [node, ...nodeOptions, server]);
  return loaderSession(tmp.home, 'requireesm', { file: path.join(path.dirname(server), '../lib/inner.mjs') });
}

/** Where it is refused: the guard ended the server before the outside code ran. */
function expectEnded(r: CallOutcome): void {
  expect(r.answer).not.toContain('loaded:');
  expect(r.refused).toHaveLength(1);
  expect(r.serverExit).toBe(77);
  expect(r.code).toBe(3);
}

/** Where require(esm) is off: node threw ERR_REQUIRE_ESM to the server, which went on; nothing was refused. */
function expectRequireEsmOff(r: CallOutcome): void {
  expect(r.answer).toContain('loaded: require returned (ERR_REQUIRE_ESM)');
  expect(r.refused).toEqual([]);
  expect(r.code).toBe(0);
}

describe.each(GUARD_NODES)(`a dependency that ships require.mjs for require() (${DEP}), on %s`, (label, node) => {
  it('is enrolled and runs: the server answers with what require() gave it, and the guard refuses nothing', async () => {
    const server = layoutSyncDepUser(tmp.dir);
    const r = await loaderCall(tmp.home, node, server, 'which', {});
    expect(r.stderr).not.toContain('module guard');
    expect(r.refused).toEqual([]);
    expect(r.answer).toContain(`loaded: sync-dep through ${VIA(label)}; require at start: none`);
    expect(r.code).toBe(0);
  });

  it('says at enrollment which ES module the server require()d where require(esm) is off, naming the node release that checks it; elsewhere it loads', async () => {
    const server = layoutSyncDepUser(tmp.dir, { 'lib/esm-only.mjs': "export const description = 'esm only';\n" });
    const esmOnly = path.join(path.dirname(server), '../lib/esm-only.mjs');
    const added = addServerWarm(tmp.home, 'loader', [node, server], ['--env', `REQUIRE_AT_START=${esmOnly}`]);
    const r = await loaderSession(tmp.home, 'which', {});
    expect(r.refused).toEqual([]);
    expect(r.code).toBe(0);
    if (IN_THREAD.has(label)) {
      expect(added.stdout + added.stderr).not.toContain('require()d');
      expect(r.answer).toContain('require at start: gave esm only');
    } else {
      expect(added.stdout + added.stderr).toContain(`Note: server 'loader' require()d "${fs.realpathSync(esmOnly)}", which node loads only as an ES module.`);
      expect(added.stdout + added.stderr).toContain('enroll it again with node 22.15 or later');
      expect(r.answer).toContain('require at start: threw ERR_REQUIRE_ESM');
    }
  });

  // Attacks on the way require(esm) is made safe: nothing from outside the attested set runs, on any node.
  it('runs no file outside the set that a require()d ES module of the set imports statically', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'elsewhere/outside.mjs'), marker);
    const r = await requireInner(node, `export { description } from ${JSON.stringify(outside)};\n`);
    expect(markerText(marker)).toBe('');
    if (IN_THREAD.has(label)) expectEnded(r);
    else expectRequireEsmOff(r);
  });

  it('runs no file outside the set that a require()d ES module of the set imports dynamically', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'elsewhere/outside.mjs'), marker);
    const r = await requireInner(node, `export const description = 'inner';\nexport const later = () => import(${JSON.stringify(outside)});\n`);
    expect(markerText(marker)).toBe('');
    if (IN_THREAD.has(label)) expectEnded(r);
    else expectRequireEsmOff(r);
  });

  it('runs no data: URL module that a require()d ES module of the set imports', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const body = `import fs from 'node:fs'; fs.appendFileSync(${JSON.stringify(marker)}, 'data ran'); export const description = 'data';`;
    const r = await requireInner(node, `export { description } from ${JSON.stringify(`data:text/javascript,${encodeURIComponent(body)}`)};\n`);
    expect(markerText(marker)).toBe('');
    if (IN_THREAD.has(label)) expectEnded(r);
    else expectRequireEsmOff(r);
  });

  it('runs no file outside the set that a require()d ES module imports through a symlinked directory of the package', async () => {
    const marker = path.join(tmp.dir, 'marker');
    outsideEsm(path.join(tmp.dir, 'elsewhere/outside.mjs'), marker);
    const server = layoutSyncDepUser(tmp.dir, { 'lib/inner.mjs': "export { description } from './linked/outside.mjs';\n" });
    fs.symlinkSync(path.join(tmp.dir, 'elsewhere'), path.join(path.dirname(server), '../lib/linked'));
    const r = await loaderCall(tmp.home, node, server, 'requireesm', { file: path.join(path.dirname(server), '../lib/inner.mjs') });
    expect(markerText(marker)).toBe('');
    if (IN_THREAD.has(label)) expectEnded(r);
    else expectRequireEsmOff(r);
  });

  it('runs no ES module outside the set that a symlink of the package names, require()d through the link', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'elsewhere/outside.mjs'), marker);
    const server = layoutSyncDepUser(tmp.dir);
    fs.symlinkSync(outside, path.join(path.dirname(server), '../lib/link.mjs'));
    const r = await loaderCall(tmp.home, node, server, 'requireesm', { file: path.join(path.dirname(server), '../lib/link.mjs') });
    expect(markerText(marker)).toBe('');
    expectEnded(r); // the file itself is outside: refused before node reads it, on every node
  });

  it('still refuses require(esm) where the server\'s own node options turn it back on: at enrollment on node 20, at the outside import elsewhere', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'elsewhere/outside.mjs'), marker);
    const server = layoutSyncDepUser(tmp.dir, { 'lib/inner.mjs': `export { description } from ${JSON.stringify(outside)};\n` });
    const commandLine = [node, '--experimental-require-module', server];
    if (IN_THREAD.has(label)) {
      addServerWarm(tmp.home, 'loader', commandLine);
      const r = await loaderSession(tmp.home, 'requireesm', { file: path.join(path.dirname(server), '../lib/inner.mjs') });
      expectEnded(r);
    } else {
      // sync-dep resolves to its require.mjs again, which the guard refuses as the server starts: `add` says so.
      warmNodeDigest(tmp.home, 'loader', node);
      const added = cli(tmp.home, ['add', 'loader', '--yes', '--', ...commandLine]);
      expect(added.code).toBe(3);
      expect(added.stdout + added.stderr).toContain('node_modules/sync-dep/require.mjs with require() as an ES module'); // the end of its stderr
      expect(added.stdout + added.stderr).toContain('or run the server with node 22.15 or later');
    }
    expect(markerText(marker)).toBe('');
  });
});

describe('the release of a node that is not the warden\'s own, asked once', () => {
  const [, node24] = IN_THREAD_NODES.find(([l]) => l === 'node 24') as [string, string];

  it('is recorded by the executable\'s digest at its first launch, and what is recorded decides the next launch without asking node again', async () => {
    const server = layoutSyncDepUser(tmp.dir);
    const first = await loaderCall(tmp.home, node24, server, 'which', {});
    expect(first.answer).toContain('loaded: sync-dep through require.mjs');
    const file = path.join(tmp.home, 'cache/node-releases.json');
    const recorded = JSON.parse(fs.readFileSync(file, 'utf8')) as { version: number; releases: Record<string, string> };
    expect(Object.values(recorded.releases)).toEqual(['v24.22.3']);
    // A record naming another release is what the next launch goes by: node 24 as if it were 20.20 starts with
    // require(esm) off, and sync-dep resolves to its CommonJS index.js.
    const [sha] = Object.keys(recorded.releases);
    fs.writeFileSync(file, JSON.stringify({ version: 1, releases: { [sha as string]: 'v20.20.2' } }));
    const second = await loaderSession(tmp.home, 'which', {});
    expect(second.answer).toContain('loaded: sync-dep through index.js');
    expect(second.code).toBe(0);
  });
});
