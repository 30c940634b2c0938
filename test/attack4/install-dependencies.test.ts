import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tarball } from '../helpers/npm-pack.mjs';
import { DEMO_DEP, DEMO_SERVER, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { cli, tempDir } from '../helpers/warden.js';
import { hostileGitDependency, variant } from './common.js';

// What npm installs beside a verified package, attacked by a hostile registry (or mirror) and by a hostile
// publisher. The provenance covers one tarball; npm takes the dependency list from the registry's packument, not
// from that tarball, and a dependency that is a git URL makes npm run programs while it installs, --ignore-scripts
// or not. What each package stands for:
//   - demo-server 1.0.x: the genuine release (the fixture's files), signed by the test sigstore instance the home
//     trusts, for the bytes served; only the packument's copy of its manifest is changed, by the registry
//     (`packumentManifest`), or the publisher's own package.json names a git dependency (signed as published).
//   - evil-dep: a package the attacker publishes without provenance.
//   - the git dependency: a local repository whose .npmrc names its own evil.sh as npm's `git` (PackageGate).

const CODE = /^mcp-warden: ([A-Z_]+):/m;
const T = 180_000;

let dir: string;
let reg: ProvenanceRegistry;
let home: string;
const servers = (): Record<string, unknown> => {
  const file = path.join(home, 'servers.json');
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { servers: Record<string, unknown> }).servers : {};
};

beforeAll(async () => {
  dir = tempDir('warden-attack4-deps-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
  reg.publish('evil-dep', '2.0.0', {
    tarball: tarball([
      { rel: 'package.json', data: JSON.stringify({ name: 'evil-dep', version: '2.0.0', type: 'module', exports: './index.mjs' }) },
      { rel: 'index.mjs', data: "export const echo = (m) => `owned: ${m}`;\n" },
    ]),
    attestations: 'none',
  });
});
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe('install runs no program of a dependency while npm installs (--ignore-scripts is not enough for git dependencies)', () => {
  it('a git dependency named by the publisher\'s signed package.json runs nothing before the install is refused', () => {
    const marker = path.join(dir, 'publisher-git-ran');
    const spec = hostileGitDependency(path.join(dir, 'git-publisher'), marker);
    // The publisher's own release: package.json names a git dependency; signed genuinely for these bytes.
    reg.publish(DEMO_SERVER, '1.0.1', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.1', dependencies: { [DEMO_DEP]: '1.0.0', gitdep: spec } }) });
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.1`, '--id', 'git-publisher', '--yes'], { env: reg.env });
    expect([r.code, CODE.exec(r.stderr)?.[1]], r.stderr).toEqual([3, 'NPM_SOURCE_REFUSED']); // npm runs with --allow-git=none (docs/adr/0043)
    expect(Object.keys(servers())).not.toContain('git-publisher');
    expect(fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '', 'a program from the git dependency ran during install').toBe('');
  }, T);

  it('a git dependency the registry adds to the packument\'s copy of a genuine signed package runs nothing', () => {
    const marker = path.join(dir, 'registry-git-ran');
    const spec = hostileGitDependency(path.join(dir, 'git-registry'), marker);
    // The genuine bytes (fixture 1.0.0 as 1.0.2), genuinely signed; only the registry's packument lists another dependency.
    reg.publish(DEMO_SERVER, '1.0.2', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.2' }), packumentManifest: { dependencies: { [DEMO_DEP]: '1.0.0', gitdep: spec } } });
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.2`, '--id', 'git-registry', '--yes'], { env: reg.env });
    expect([r.code, CODE.exec(r.stderr)?.[1]], r.stderr).toEqual([3, 'NPM_SOURCE_REFUSED']);
    expect(Object.keys(servers())).not.toContain('git-registry');
    expect(fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '', 'a program from the git dependency ran during install').toBe('');
  }, T);

  it('--dry-run resolves the same hostile packument without running it (it only writes a lockfile)', () => {
    const marker = path.join(dir, 'dry-run-git-ran');
    const spec = hostileGitDependency(path.join(dir, 'git-dry'), marker);
    reg.publish(DEMO_SERVER, '1.0.6', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.6' }), packumentManifest: { dependencies: { [DEMO_DEP]: '1.0.0', gitdep: spec } } });
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.6`, '--id', 'git-dry', '--dry-run'], { env: reg.env });
    expect([r.code, CODE.exec(r.stderr)?.[1]], r.stderr).toEqual([3, 'NPM_SOURCE_REFUSED']);
    expect(fs.existsSync(marker)).toBe(false); // a hosted one pinned to a commit would be prepared: test/attack22/npm-dry-run-git.test.ts
  }, T);
});

describe('install installs the dependencies the signed tarball declares, not the ones the registry says', () => {
  it('a dependency the registry adds (unsigned, not in the tarball\'s package.json) is refused', () => {
    reg.publish(DEMO_SERVER, '1.0.3', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.3' }), packumentManifest: { dependencies: { [DEMO_DEP]: '1.0.0', 'evil-dep': '2.0.0' } } });
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.3`, '--id', 'added-dep', '--yes'], { env: reg.env });
    expect([r.code, CODE.exec(r.stderr)?.[1]], `${r.stdout}\n${r.stderr}`).toEqual([3, 'INSTALL_FAILED']);
    expect(r.stderr).toContain('evil-dep');
    expect(Object.keys(servers())).not.toContain('added-dep');
  }, T);

  it('a declared dependency the registry turns into an alias of another (unsigned) package is refused', () => {
    // The server imports @mcp-warden-test/demo-dep; the registry's copy makes npm put evil-dep under that name.
    reg.publish(DEMO_SERVER, '1.0.4', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.4' }), packumentManifest: { dependencies: { [DEMO_DEP]: 'npm:evil-dep@2.0.0' } } });
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.4`, '--id', 'aliased-dep', '--yes'], { env: reg.env });
    expect([r.code, CODE.exec(r.stderr)?.[1]], `${r.stdout}\n${r.stderr}`).toEqual([3, 'INSTALL_FAILED']);
    expect(Object.keys(servers())).not.toContain('aliased-dep');
  }, T);
});

describe('a dependency installed under an alias (npm:<name>@<version>, common in real packages)', () => {
  it('is looked up and recorded under the package it is, not under its alias', () => {
    // The publisher's own package.json: the dependency twice, once under an alias no registry package has.
    reg.publish(DEMO_SERVER, '1.0.5', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.5', dependencies: { [DEMO_DEP]: '1.0.0', 'demo-dep-alias': `npm:${DEMO_DEP}@1.0.0` } }) });
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.5`, '--id', 'alias-ok', '--yes'], { env: reg.env });
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('Dependencies  2 of 2 packages with verified provenance\n');
  }, T);
});

describe('an optional dependency npm skips on this platform (sharp\'s wasm32 build, as @wonderwhy-er/desktop-commander has)', () => {
  it('installs: a vetted optional package npm ci did not install, and the dependency only it needs, are not "installed otherwise"', () => {
    // plat-only runs on a CPU no machine here has (npm ci skips it and what only it needs: plat-runtime), as
    // @img/sharp-wasm32 and @emnapi/runtime in desktop-commander's tree; the lockfile still lists both, optional.
    const pkg = (name: string, extra: Record<string, unknown>): Buffer => tarball([{ rel: 'package.json', data: JSON.stringify({ name, version: '1.0.0', ...extra }) }, { rel: 'index.js', data: '' }]);
    reg.publish('plat-runtime', '1.0.0', { tarball: pkg('plat-runtime', {}), attestations: 'none' });
    reg.publish('plat-only', '1.0.0', { tarball: pkg('plat-only', { cpu: ['wasm32'], dependencies: { 'plat-runtime': '1.0.0' } }), attestations: 'none' });
    reg.publish(DEMO_SERVER, '1.0.7', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.7', optionalDependencies: { 'plat-only': '1.0.0' } }) });
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.7`, '--id', 'optional-skipped', '--yes'], { env: reg.env });
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(Object.keys(servers())).toContain('optional-skipped');
  }, T);
});
