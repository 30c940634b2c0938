import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SERVER, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { treeSnapshot } from '../helpers/tree-snapshot.js';
import { cli, tempDir } from '../helpers/warden.js';
import { variant } from './common.js';

// The server `install` runs is the package's bin script, read from the signed tarball's package.json. A bin that
// leads out of the package (`../`) makes the server run a file the provenance says nothing about: another
// package's (an unsigned dependency's), or any file on the machine, while the install reports a verified package.
// npm itself never links such a bin (it strips the leading ../). What each package stands for:
//   - demo-server 1.0.x: genuinely signed by the test sigstore instance the home trusts, for the bytes served; its
//     publisher's package.json names a bin outside the package (a careless or hostile publisher).

const CODE = /^mcp-warden: ([A-Z_]+):/m;
const T = 120_000;

let dir: string;
let reg: ProvenanceRegistry;
let home: string;
beforeAll(async () => {
  dir = tempDir('warden-attack4-bin-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
  const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--yes'], { env: reg.env });
  if (r.code !== 0) throw new Error(`the first install failed (${r.code}): ${r.stderr}`);
});
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

function refused(args: string[]): { code: number | null; refusal: string | undefined; stderr: string; stdout: string } {
  const before = treeSnapshot(home);
  const r = cli(home, ['install', ...args], { env: reg.env });
  expect(treeSnapshot(home), 'the home (and its store) must be left unchanged').toEqual(before);
  return { ...r, refusal: CODE.exec(r.stderr)?.[1] };
}

describe('install refuses a bin script outside the package', () => {
  it('a bin climbing out of the store to a file elsewhere on the machine', () => {
    const outside = path.join(dir, 'outside', 'server.mjs');
    fs.mkdirSync(path.dirname(outside), { recursive: true });
    fs.writeFileSync(outside, "process.stderr.write('not the package that was verified\\n');\n");
    const bin = `${'../'.repeat(24)}${outside.slice(1)}`;
    reg.publish(DEMO_SERVER, '1.0.7', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.7', bin: { 'demo-server': bin } }) });
    const r = refused([`${DEMO_SERVER}@1.0.7`, '--id', 'escape-abs', '--yes']);
    expect([r.code, r.refusal], `${r.stdout}\n${r.stderr}`).toEqual([3, 'INSTALL_FAILED']);
  }, T);

  it('a bin pointing into a dependency (../demo-dep/index.mjs): code no provenance covers', () => {
    reg.publish(DEMO_SERVER, '1.0.8', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.8', bin: { 'demo-server': '../demo-dep/index.mjs' } }) });
    const r = refused([`${DEMO_SERVER}@1.0.8`, '--id', 'escape-dep', '--yes']);
    expect([r.code, r.refusal], `${r.stdout}\n${r.stderr}`).toEqual([3, 'INSTALL_FAILED']);
  }, T);

  it('--dry-run says the same (it cannot be enrolled) and writes nothing', () => {
    reg.publish(DEMO_SERVER, '1.0.11', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.11', bin: { 'demo-server': '../demo-dep/index.mjs' } }) });
    const before = treeSnapshot(home);
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.11`, '--id', 'escape-dry', '--dry-run'], { env: reg.env });
    expect(r.code, r.stderr).toBe(0); // a dry run that verified; it says why the package cannot be enrolled
    expect(r.stdout).toContain(`Cannot enroll as it stands: the bin 'demo-server' of ${DEMO_SERVER}@1.0.11 names "../demo-dep/index.mjs", outside the package, which its provenance does not cover.`);
    expect(r.stdout).not.toContain('Runs ');
    expect(treeSnapshot(home)).toEqual(before);
  }, T);

  it('the registry\'s copy of the manifest naming another bin changes nothing: the tarball\'s is run (holds)', () => {
    reg.publish(DEMO_SERVER, '1.0.10', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.10' }), packumentManifest: { bin: { 'demo-server': '../demo-dep/index.mjs' } } });
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.10`, '--id', 'packument-bin', '--dry-run'], { env: reg.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Runs        node server.mjs (server 'packument-bin')\n");
  }, T);
});
