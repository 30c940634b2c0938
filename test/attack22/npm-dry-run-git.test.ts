import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { variant } from '../attack4/common.js';
import { DEMO_DEP, DEMO_SERVER, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { cli, tempDir } from '../helpers/warden.js';
import { preparedFiles, ran, startGitHost, storeNames, type GitHost } from './npm-common.js';

// Issue 26, item 18: a hosted git dependency pinned to a commit (github:owner/repo#<sha>), added by the registry to
// the packument of a genuine signed package, is fetched from the git host's tarball URL and prepared by npm while
// it only resolves the tree (`--package-lock-only`): the preparation is an `npm install` in the checkout, which reads
// the checkout's .npmrc (git=./evil.sh). The git host here is a loopback stand-in (npm-common.ts).

const CODE = /^mcp-warden: ([A-Z_]+):/m;
const T = 120_000;

let dir: string;
let reg: ProvenanceRegistry;
let host: GitHost;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dir = tempDir('warden-npm-dry-run-git-');
  reg = await startProvenanceRegistry(dir);
  host = await startGitHost(dir);
  env = { ...reg.env, ...host.env };
});
afterAll(async () => {
  await host?.close();
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** Publishes demo-server VERSION (genuine, signed) whose packument copy adds a hosted git dependency. */
function publishWithHostedGitDependency(version: string, marker: string): void {
  const spec = host.serve('mcp-warden-test', `gitdep-${version.replaceAll('.', '-')}`, preparedFiles(dir, marker, { name: 'gitdep', version: '1.0.0' }));
  reg.publish(DEMO_SERVER, version, { tarball: variant(DEMO_SERVER, '1.0.0', { version }), packumentManifest: { dependencies: { [DEMO_DEP]: '1.0.0', gitdep: spec } } });
}

describe('a hosted git dependency pinned to a commit is never fetched or prepared', () => {
  it('install --dry-run refuses it before npm reaches the git host, and writes nothing', () => {
    const marker = path.join(dir, 'dry-run-ran');
    publishWithHostedGitDependency('1.0.8', marker);
    const home = path.join(dir, 'dry-home');
    reg.trustHome(home);
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.8`, '--id', 'dry', '--dry-run'], { env });
    expect([r.code, CODE.exec(r.stderr)?.[1]], `${r.stdout}\n${r.stderr}`).toEqual([3, 'NPM_SOURCE_REFUSED']);
    expect(r.stderr).toContain('gitdep');
    expect(ran(marker), 'a program of the git dependency ran').toBe('');
    expect(host.requests()).toEqual([]);
    expect(fs.readdirSync(home)).toEqual(['trust-root.json']); // a dry run writes nothing
  }, T);

  it('install refuses it the same way and leaves no server and no store entry', () => {
    const marker = path.join(dir, 'install-ran');
    publishWithHostedGitDependency('1.0.9', marker);
    const home = path.join(dir, 'install-home');
    reg.trustHome(home);
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.9`, '--id', 'hosted', '--yes'], { env });
    expect([r.code, CODE.exec(r.stderr)?.[1]], `${r.stdout}\n${r.stderr}`).toEqual([3, 'NPM_SOURCE_REFUSED']);
    expect(ran(marker), 'a program of the git dependency ran').toBe('');
    expect(host.requests()).toEqual([]);
    expect(fs.existsSync(path.join(home, 'servers.json'))).toBe(false);
    expect(storeNames(home)).toEqual([]);
  }, T);
});
