import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NPM_PROVENANCE_FIXTURES, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { treeSnapshot } from '../helpers/tree-snapshot.js';
import { cli, tempDir } from '../helpers/warden.js';
import { basicHome } from '../helpers/run-template.js';

// `mcp-warden install` of a real npm release: gundam-visor@1.0.1's tarball and the attestations the npm registry
// served for it (test/fixtures/sigstore/npm-provenance/, signed by GitHub Actions through the public-good
// sigstore instance and by the npm registry's key), served by the loopback registry stand-in. The home has no
// trust-root.json: what verifies them is the trust root shipped with mcp-warden. Nothing here is signed locally.
// The package has no bin script, so install verifies it and says it cannot enroll it as it stands.

const TARBALL = path.join(NPM_PROVENANCE_FIXTURES, 'gundam-visor-cli-v1-tag.tgz');
const attestations = (variant = '') => path.join(NPM_PROVENANCE_FIXTURES, `gundam-visor-cli-v1-tag${variant}.tgz.json`);
const INTEGRITY = `sha512-${crypto.createHash('sha512').update(fs.readFileSync(TARBALL)).digest('base64')}`;
const CODE = /^mcp-warden: ([A-Z_]+):/m;

let dir: string;
let reg: ProvenanceRegistry;
let home: string;
beforeAll(async () => {
  dir = tempDir('warden-install-real-');
  reg = await startProvenanceRegistry(dir, { publishFixtures: false });
  home = path.join(dir, 'home');
  basicHome(home); // a home in use, with no trust-root.json
});
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe('install: a real npm release verified with the shipped trust root', () => {
  it('--dry-run shows who built it, says it cannot enroll it without --entry, and leaves the home byte-identical', () => {
    reg.publish('gundam-visor', '1.0.1', { tarball: TARBALL, attestationsFile: attestations() });
    const before = treeSnapshot(home);
    const r = cli(home, ['install', 'gundam-visor', '--dry-run'], { env: reg.env });
    expect(r.code, r.stderr).toBe(0);
    for (const line of [
      'Package     gundam-visor@1.0.1',
      `Integrity   ${INTEGRITY}`,
      'Provenance  verified, signed 2024-06-03T22:17:59.000Z',
      '  source    https://github.com/ramonpetgrave64/gundam-visor',
      '  workflow  .github/workflows/npm-publish.yml',
      '  ref       refs/tags/v1.0.1',
      '  commit    599500821344b070902a7a5666064bfdaba715df',
      '  issuer    https://token.actions.githubusercontent.com',
      'Dependencies  0 of 0 packages with verified provenance',
    ]) {
      expect(r.stdout).toContain(`${line}\n`);
    }
    expect(r.stdout).toMatch(/Cannot enroll as it stands: gundam-visor@1\.0\.1 has no bin script.*name it with --entry <file in the package>/);
    expect(r.stdout).toContain('Dry run: nothing was written.\n');
    expect(fs.existsSync(path.join(home, 'trust-root.json'))).toBe(false);
    expect(treeSnapshot(home)).toEqual(before);
  });

  it.each([
    ['its provenance signature broken', '-invalidsigprov', /the provenance of gundam-visor@1\.0\.1 does not verify/],
    ['its npm publish attestation signature broken', '-invalidsigpub', /the npm publish attestation of gundam-visor@1\.0\.1 does not verify/],
  ])('refuses the same tarball with %s: PROVENANCE_INVALID (exit 3), the home unchanged', (_, variant, message) => {
    reg.publish('gundam-visor', '1.0.1', { tarball: TARBALL, attestationsFile: attestations(variant) });
    const before = treeSnapshot(home);
    const r = cli(home, ['install', 'gundam-visor@1.0.1', '--entry', 'index.js', '--yes'], { env: reg.env });
    expect([r.code, CODE.exec(r.stderr)?.[1]], r.stderr).toEqual([3, 'PROVENANCE_INVALID']);
    expect(r.stderr).toMatch(message);
    expect(treeSnapshot(home)).toEqual(before);
  });
});
