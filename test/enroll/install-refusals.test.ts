import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SERVER, NO_BIN, identityFor, startProvenanceRegistry, trustRootOf, writeTrustRoot, type ProvenanceRegistry, type TrustRootFile } from '../helpers/provenance-registry.js';
import { createTestPki, sanOf } from '../helpers/sigstore-pki.js';
import { treeSnapshot } from '../helpers/tree-snapshot.js';
import { cli, tempDir, type CliResult } from '../helpers/warden.js';

// What `mcp-warden install` refuses, end to end through the registry stand-in: each refusal exits 3 with its
// stable code and leaves the home and its sealed store exactly as they were (every file hashed before and
// after). The home used holds a completed install of demo-server 1.0.0, so there is a store to leave alone.
// What each locally signed bundle stands for:
//   - genuine (startProvenanceRegistry): publish attestation by the registry's key, SLSA provenance by the release
//     workflow of github.com/mcp-warden-test/demo-server, both signed by the test sigstore instance the home's
//     trust-root.json holds, for the tarball served.
//   - "mallory": a genuine signature by that same instance, but for a build by github.com/mallory/demo-server's
//     workflow (a fork publishing under the name), refused only because --identity names the real repository.
//   - "tampered": a genuine provenance whose statement was edited after signing (another source repository).
//   - "rogue": signed by a second test instance, a CA and logs the trust root has never held, at a time the
//     root's date covers: a forgery, not a rotation.
//   - the stale roots: the genuine release (signed now) checked against a root taken before it by an instance
//     since retired, or against the genuine instance's root whose authorities' windows closed before now.

const CODE = /^mcp-warden: ([A-Z_]+):/m;
const HOUR = 3_600_000;

let dir: string;
let reg: ProvenanceRegistry;
let home: string;
beforeAll(async () => {
  dir = tempDir('warden-install-refusals-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
  const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--yes'], { env: reg.env });
  if (r.code !== 0) throw new Error(`the install the refusals start from failed (${r.code}): ${r.stderr}`);
});
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** Runs `install ...args` in `where` and returns its result, asserting that nothing in that home changed. */
function refused(where: string, args: string[]): CliResult & { refusal: string | undefined } {
  const before = treeSnapshot(where);
  const r = cli(where, ['install', ...args], { env: reg.env });
  expect(treeSnapshot(where), 'the home (and its store) must be left unchanged').toEqual(before);
  return { ...r, refusal: CODE.exec(r.stderr)?.[1] };
}

describe('install refuses, and leaves the home and the store unchanged', () => {
  it('a tarball that does not match the registry\'s dist.integrity: INTEGRITY_MISMATCH', () => {
    // Genuine attestations for the genuine tarball; other bytes served in its place, dist.integrity left as it was.
    reg.publish(DEMO_SERVER, '1.0.0', { swapTarball: 'stale' });
    const r = refused(home, [`${DEMO_SERVER}@1.0.0`, '--id', 'refused', '--yes']);
    expect([r.code, r.refusal]).toEqual([3, 'INTEGRITY_MISMATCH']);
    expect(r.stderr).toMatch(/does not have the sha512 its package document names/);
  });

  it('a swapped tarball whose dist.integrity was recomputed for it, the attestations being for the original: PROVENANCE_SUBJECT_MISMATCH', () => {
    // Genuine attestations for the genuine tarball; other bytes served, and dist.integrity recomputed to name them.
    const p = reg.publish(DEMO_SERVER, '1.0.0', { swapTarball: 'recomputed' });
    const r = refused(home, [`${DEMO_SERVER}@1.0.0`, '--id', 'refused', '--yes']);
    expect([r.code, r.refusal]).toEqual([3, 'PROVENANCE_SUBJECT_MISMATCH']);
    expect(r.stderr).toContain(`${p.sha512hex.slice(0, 16)}… attested`);
  });

  it('a package without attestations, --yes alone: PROVENANCE_MISSING, naming --allow-unsigned', () => {
    reg.publish(DEMO_SERVER, '1.0.0', { attestations: 'none' }); // nothing signed: released without provenance
    const r = refused(home, [`${DEMO_SERVER}@1.0.0`, '--id', 'refused', '--yes']);
    expect([r.code, r.refusal]).toEqual([3, 'PROVENANCE_MISSING']);
    expect(r.stderr).toContain('--allow-unsigned');
  });

  it('a provenance signed by another workflow than --identity names: IDENTITY_MISMATCH', () => {
    const mallory = { ...identityFor(DEMO_SERVER, '1.0.0'), repository: 'https://github.com/mallory/demo-server' };
    reg.publish(DEMO_SERVER, '1.0.0', { identity: mallory }); // genuinely signed, for a build by the fork's workflow
    const r = refused(home, [`${DEMO_SERVER}@1.0.0`, '--id', 'refused', '--identity', 'https://github.com/mcp-warden-test/demo-server/*', '--yes']);
    expect([r.code, r.refusal]).toEqual([3, 'IDENTITY_MISMATCH']);
    expect(r.stderr).toContain(`was built by ${sanOf(mallory)}`);
  });

  it('a provenance whose statement was altered after it was signed: PROVENANCE_INVALID', () => {
    reg.publish(DEMO_SERVER, '1.0.0', { attestations: 'tampered' }); // genuine, then its provenance statement edited
    const r = refused(home, [`${DEMO_SERVER}@1.0.0`, '--id', 'refused', '--yes']);
    expect([r.code, r.refusal]).toEqual([3, 'PROVENANCE_INVALID']);
    expect(r.stderr).toMatch(/the provenance of .* does not verify/);
  });

  it('attestations signed by a sigstore instance the trust root does not hold: PROVENANCE_INVALID', () => {
    const rogue = createTestPki(); // a CA and logs the home's trust root never held: a forgery dated within the root's time
    reg.publish(DEMO_SERVER, '1.0.0', { pki: rogue, signedAt: new Date(Date.parse(reg.trustRoot.date) - HOUR) });
    const r = refused(home, [`${DEMO_SERVER}@1.0.0`, '--id', 'refused', '--yes']);
    expect([r.code, r.refusal]).toEqual([3, 'PROVENANCE_INVALID']);
  });

  it('a package with no bin script: INSTALL_FAILED, naming --entry, nothing installed', () => {
    const r = refused(home, [`${NO_BIN}@1.0.0`, '--yes']);
    expect([r.code, r.refusal]).toEqual([3, 'INSTALL_FAILED']);
    expect(r.stderr).toMatch(/has no bin script.*--entry/);
  });
});

describe('install refuses against a stale trust root (TRUST_ROOT_STALE), in a home holding only that root', () => {
  /** A home whose only file is `root` as trust-root.json. */
  const homeWith = (name: string, root: TrustRootFile): string => {
    const h = path.join(dir, name);
    writeTrustRoot(h, root);
    return h;
  };

  it('a root taken before the release was signed, whose keys signed none of it', () => {
    reg.publish(DEMO_SERVER, '1.0.0'); // the genuine release, signed now by the current instance
    const retired = createTestPki(); // the instance the root was taken from, which signs nothing any more
    const stale = homeWith('home-stale-date', trustRootOf(retired, new Date(Date.now() - 30 * 24 * HOUR)));
    const r = refused(stale, [`${DEMO_SERVER}@1.0.0`, '--yes']);
    expect([r.code, r.refusal]).toEqual([3, 'TRUST_ROOT_STALE']);
    expect(r.stderr).toContain("Update it with 'mcp-warden trust-root update'");
  });

  it('a root whose authorities\' windows all closed before the signing time', () => {
    reg.publish(DEMO_SERVER, '1.0.0'); // the genuine release, signed now by the instance this root names
    const ended = structuredClone(reg.trustRoot);
    const end = new Date(Date.now() - 24 * HOUR).toISOString();
    for (const w of [...ended.trustedRoot.tlogs, ...ended.trustedRoot.ctlogs, ...ended.npmKeys.keys].map((x) => x.publicKey.validFor)) w.end = end;
    for (const ca of ended.trustedRoot.certificateAuthorities) ca.validFor.end = end;
    ended.date = new Date(Date.now() - 2 * 24 * HOUR).toISOString();
    const stale = homeWith('home-stale-windows', ended);
    const r = refused(stale, [`${DEMO_SERVER}@1.0.0`, '--yes']);
    expect([r.code, r.refusal]).toEqual([3, 'TRUST_ROOT_STALE']);
  });
});
