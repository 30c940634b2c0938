import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { variant } from '../attack4/common.js';
import { snapshot } from '../bundle/helpers.js';
import { DEMO_SERVER, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { cli, tempDir } from '../helpers/warden.js';
import { localGitRepo, preparedFiles, ran, storeNames } from './npm-common.js';

// Issue 26, item 17: a registry that recognises npm by its User-Agent tells it, for the very version whose tarball
// and attestations the warden verified, a `dist.tarball` that is a git+ URL. npm records that as the package's
// `resolved`, and `npm ci` would install the git checkout (whose fetcher does not check the integrity) and prepare
// it. The warden must take each package only from its registry tarball, the top package included.

const CODE = /^mcp-warden: ([A-Z_]+):/m;
const T = 120_000;

let dir: string;
let reg: ProvenanceRegistry;
let home: string;
const servers = (): Record<string, unknown> => {
  const file = path.join(home, 'servers.json');
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { servers: Record<string, unknown> }).servers : {};
};

/** A git repository holding another demo-server VERSION (other code, a preparation that runs a program). */
function substitute(version: string, marker: string): string {
  const files = preparedFiles(dir, marker, { name: DEMO_SERVER, version, type: 'module', bin: { 'demo-server': 'server.mjs' } });
  return localGitRepo(path.join(dir, `substitute-${version}`), [...files, { rel: 'server.mjs', data: "process.stdout.write('not the server that was verified\\n');\n" }]);
}

beforeAll(async () => {
  dir = tempDir('warden-npm-substitution-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
});
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe('npm is given a git+ tarball URL for the version the warden verified', () => {
  it('install refuses it as a source other than the registry tarball, runs nothing and writes no server or store entry', () => {
    const marker = path.join(dir, 'install-ran');
    reg.publish(DEMO_SERVER, '1.0.7', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.7' }), npmTarball: substitute('1.0.7', marker) });
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.7`, '--id', 'substituted', '--yes'], { env: reg.env });
    expect([r.code, CODE.exec(r.stderr)?.[1]], `${r.stdout}\n${r.stderr}`).toEqual([3, 'NPM_SOURCE_REFUSED']);
    expect(r.stderr).toContain(`${DEMO_SERVER}@1.0.7`);
    expect(r.stderr).toContain('git+file://');
    expect(ran(marker), 'a program of the git checkout ran').toBe('');
    expect(servers()).not.toHaveProperty('substituted');
    expect(storeNames(home)).toEqual([]);
  }, T);

  it('upgrade --yes refuses it and leaves the trust files and the store as they were', () => {
    const installed = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--id', 'upgraded', '--yes'], { env: reg.env });
    expect(installed.code, installed.stderr).toBe(0);
    const before = snapshot(home);
    const store = storeNames(home);
    const marker = path.join(dir, 'upgrade-ran');
    reg.publish(DEMO_SERVER, '1.2.7', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.2.7' }), npmTarball: substitute('1.2.7', marker) });
    const r = cli(home, ['upgrade', 'upgraded', '--to', '1.2.7', '--yes'], { env: reg.env });
    expect([r.code, CODE.exec(r.stderr)?.[1]], `${r.stdout}\n${r.stderr}`).toEqual([3, 'NPM_SOURCE_REFUSED']);
    expect(ran(marker), 'a program of the git checkout ran').toBe('');
    expect(snapshot(home)).toEqual(before);
    expect(storeNames(home)).toEqual(store);
    expect((servers().upgraded as { package: { version: string } }).package.version).toBe('1.0.0');
  }, T);
});
