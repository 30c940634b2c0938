import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPrivateKey, signWithKey } from '../../src/fleet/signature.js';
import { tarball } from '../helpers/npm-pack.mjs';
import { snapshot } from '../bundle/helpers.js';
import { DEMO_DEP, storeMachines, type StoreMachines } from '../bundle/store-helpers.js';
import { auditEvents, cli } from '../helpers/warden.js';
import { localGitRepo, preparedFiles, ran, startGitHost, storeNames, type GitHost } from './npm-common.js';
import { member, readJson, type BundleJson, type PackageLockJson } from '../helpers/json-docs.js';

// Issue 26, items 19 and 20: what a trust bundle's store lockfile makes `npm ci` do on every applying machine.
// 19: an edge whose spec is a dist-tag ("latest") is not satisfied by an entry without `resolved` (bundles carry
// none), so npm ci resolves it again from the registry, whose manifest then names a hosted git dependency that npm
// prepares. 20: an entry whose `version` is a git URL under an edge "*" makes npm ci clone and prepare that
// repository. Both must be refused before npm runs, with nothing changed.


let m: StoreMachines;
let host: GitHost;
let demo: string;
beforeAll(async () => {
  m = await storeMachines('warden-npm-bundle-lockfile-');
  host = await startGitHost(m.dir);
  demo = m.signed('demo', ['demo-server']);
}, 120_000);
afterAll(async () => {
  await host?.close();
  await m?.close();
});

/** A copy of `demo` with `edit` applied to its store lockfile's packages, signed again with the trusted key. */
function resigned(name: string, edit: (packages: PackageLockJson['packages']) => void): string {
  const doc = readJson<BundleJson>(demo);
  const [entry] = Object.keys(doc.packages);
  edit(member(doc.packages, entry as string).lockfile.packages);
  const out = path.join(m.dir, `${name}.bundle.json`);
  const bytes = Buffer.from(JSON.stringify(doc, null, 2) + '\n');
  fs.writeFileSync(out, bytes);
  fs.writeFileSync(`${out}.sigstore.json`, JSON.stringify(signWithKey(bytes, readPrivateKey(fs.readFileSync(m.key.priv, 'utf8'), m.key.priv), m.key.priv)));
  return out;
}

/** Applies FILE on a fresh machine (npm reaching the git host stand-in too): refused as an invalid bundle before
 *  npm runs, with no trust file, no store entry changed. Returns stderr. */
function refusedBeforeNpm(file: string): string {
  const home = m.freshB();
  const before = snapshot(home);
  const r = cli(home, ['bundle', 'apply', file, '--key', m.key.pub], { env: { ...m.reg.env, ...host.env } });
  expect([r.code, /^mcp-warden: ([A-Z_]+):/m.exec(r.stderr)?.[1]], r.stderr).toEqual([2, 'BUNDLE_INVALID']);
  expect(snapshot(home)).toEqual(before);
  expect(storeNames(home)).toEqual([]);
  expect(auditEvents(home).at(-1)).toMatchObject({ event: 'bundle_rejected', reason: 'BUNDLE_INVALID' });
  return r.stderr;
}

describe('bundle apply takes nothing from a store lockfile that npm ci would resolve or fetch again', () => {
  it('an edge with a dist-tag spec is refused before npm ci could resolve it against a registry that now names a hosted git dependency', () => {
    const marker = path.join(m.dir, 'dist-tag-ran');
    const helper = m.reg.publish('helper', '1.0.0', { tarball: tarball([{ rel: 'package.json', data: JSON.stringify({ name: 'helper', version: '1.0.0' }) }]), attestations: 'none' });
    // The registry turns hostile: `latest` is now a version whose manifest names a hosted git dependency.
    const spec = host.serve('mcp-warden-test', 'helper-next', preparedFiles(m.dir, marker, { name: 'helper-next', version: '1.0.0' }));
    m.reg.publish('helper', '2.0.0', { tarball: tarball([{ rel: 'package.json', data: JSON.stringify({ name: 'helper', version: '2.0.0', dependencies: { 'helper-next': spec } }) }]), attestations: 'none', distTags: { latest: '2.0.0' } });
    const file = resigned('dist-tag-edge', (packages) => {
      member(packages, `node_modules/${DEMO_DEP}`).dependencies = { helper: 'latest' };
      packages['node_modules/helper'] = { version: '1.0.0', integrity: helper.integrity };
    });
    const err = refusedBeforeNpm(file);
    expect(err).toContain('"latest"');
    expect(ran(marker), 'a program of the git dependency ran').toBe('');
    expect(host.requests()).toEqual([]);
  }, 120_000);

  it('an entry whose version is a git+file URL is refused before npm ci could clone and prepare it', () => {
    const marker = path.join(m.dir, 'git-version-ran');
    const repo = localGitRepo(path.join(m.dir, 'gitdep-20'), preparedFiles(m.dir, marker, { name: 'gitdep', version: '1.0.0' }));
    const file = resigned('git-version', (packages) => {
      member(packages, `node_modules/${DEMO_DEP}`).dependencies = { gitdep: '*' };
      packages['node_modules/gitdep'] = { version: repo, integrity: `sha512-${'A'.repeat(86)}==` };
    });
    expect(refusedBeforeNpm(file)).toContain('/version');
    expect(ran(marker), 'a program of the git repository ran').toBe('');
  }, 120_000);

  it('an edge whose spec is a git+file URL is refused the same way', () => {
    const marker = path.join(m.dir, 'git-edge-ran');
    const repo = localGitRepo(path.join(m.dir, 'gitdep-20e'), preparedFiles(m.dir, marker, { name: 'gitdep', version: '1.0.0' }));
    const file = resigned('git-edge', (packages) => {
      member(packages, `node_modules/${DEMO_DEP}`).dependencies = { gitdep: repo };
      packages['node_modules/gitdep'] = { version: '1.0.0', integrity: `sha512-${'A'.repeat(86)}==` };
    });
    expect(refusedBeforeNpm(file)).toContain('git+file:');
    expect(ran(marker), 'a program of the git repository ran').toBe('');
  }, 120_000);
});
