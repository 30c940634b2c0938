import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SERVER, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { cli, tempDir } from '../helpers/warden.js';
import { variant } from './common.js';

// The npm publish attestation is "the registry's own word that it accepted exactly that tarball" under that name and
// version (docs/threat-model.md; npm-attestations.ts: "signed with the registry's own key"). It is what ties a
// provenance to the registry's namespace: npm lets only the package's publishers publish under its name, and checks
// the provenance's repository against the package. A mirror (or a registry stand-in on the operator's network) that
// serves a version npm never accepted has no such signature, unless a statement of that type signed by anything the
// trust root chains to is taken as one. What each package stands for:
//   - demo-server 1.2.0: a version the real registry never had, served by a hostile mirror; built in mallory's
//     repository (a genuine Fulcio certificate from the test sigstore instance the home trusts), and a "publish
//     attestation" mallory signed with a Fulcio certificate of that same identity, not with the registry's key.

const CODE = /^mcp-warden: ([A-Z_]+):/m;
const T = 120_000;
let dir: string;
let reg: ProvenanceRegistry;
let home: string;
beforeAll(async () => {
  dir = tempDir('warden-attack4-publish-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
});
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe('the npm publish attestation must be the registry\'s', () => {
  it('one signed with a Fulcio certificate (anyone\'s sigstore identity) is refused', () => {
    const tgz = variant(DEMO_SERVER, '1.0.0', { version: '1.2.0' });
    const sha512hex = crypto.createHash('sha512').update(tgz).digest('hex');
    const mallory = { repository: 'https://github.com/mallory/demo-server', workflow: '.github/workflows/release.yml', ref: 'refs/tags/v1.2.0', commit: 'f'.repeat(40) };
    const attestations = reg.pki.attestations({ name: DEMO_SERVER, version: '1.2.0', sha512hex }, mallory, { publishSignedBy: mallory });
    reg.publish(DEMO_SERVER, '1.2.0', { tarball: tgz, attestations });
    const r = cli(home, ['install', `${DEMO_SERVER}@1.2.0`, '--dry-run'], { env: reg.env });
    expect([r.code, CODE.exec(r.stderr)?.[1]], `${r.stdout}\n${r.stderr}`).toEqual([3, 'PROVENANCE_INVALID']);
    expect(r.stderr).toMatch(/publish attestation/);
  }, T);
});
