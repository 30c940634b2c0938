import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { bundleFromJSON } from '@sigstore/bundle';
import { X509Certificate } from '@sigstore/core';
import { TrustedRoot } from '@sigstore/protobuf-specs';
import { type KeyFinderFunc, type VerificationPolicy, VerificationError, Verifier, toSignedEntity, toTrustMaterial } from '@sigstore/verify';
import { describe, expect, it } from 'vitest';
import { type BundleJson, GITHUB_ISSUER, type Identity, type NpmKeysJson, PREDICATE_NPM_PUBLISH_V01, PREDICATE_SLSA_PROVENANCE_V1, type TrustedRootJson, createTestPki, npmKeyIdOf, sanOf } from '../helpers/sigstore-pki.js';

// The local test sigstore instance (test/helpers/sigstore-pki.ts) against the verifier the product uses, unweakened:
// @sigstore/verify's Verifier at its default thresholds (one SCT, one tlog entry, one timestamp). Its bundles pass
// with its own trust material, fail with the public-good one, and have the shape of a real npm registry answer,
// which passes the same code with the public-good root (test/fixtures/sigstore/npm-provenance/).

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/sigstore/npm-provenance');
const seedsFile = createRequire(import.meta.url).resolve('@sigstore/tuf/seeds.json');
const seedTargets = (JSON.parse(fs.readFileSync(seedsFile, 'utf8')) as Record<string, { targets: Record<string, string> }>)['https://tuf-repo-cdn.sigstore.dev']?.targets ?? {};
const seedTarget = (name: string): unknown => JSON.parse(Buffer.from(seedTargets[name] ?? '', 'base64').toString('utf8'));
const PUBLIC_ROOT = seedTarget('trusted_root.json') as TrustedRootJson;
const PUBLIC_NPM_KEYS = seedTarget('registry.npmjs.org%2Fkeys.json') as NpmKeysJson;

interface Attestations {
  attestations: { predicateType: string; bundle: BundleJson }[];
}
const realAttestations = (file: string): Attestations => JSON.parse(fs.readFileSync(path.join(FIXTURES, file), 'utf8')) as Attestations;
const bundleOf = (a: Attestations, predicateType: string): BundleJson => {
  const found = a.attestations.find((x) => x.predicateType === predicateType);
  if (!found) throw new Error(`no ${predicateType} attestation`);
  return found.bundle;
};

/** The registry keys for attestations, by key id, as keys.json lists them (the same id also names a signatures key). */
function keyFinderOf(keys: NpmKeysJson): KeyFinderFunc {
  return (hint) => {
    const k = keys.keys.find((x) => x.keyId === hint && x.keyUsage === 'npm:attestations');
    if (!k) throw new VerificationError({ code: 'PUBLIC_KEY_ERROR', message: `key not found: ${hint}` });
    const start = new Date(k.publicKey.validFor.start);
    const end = k.publicKey.validFor.end ? new Date(k.publicKey.validFor.end) : undefined;
    return {
      publicKey: crypto.createPublicKey({ key: Buffer.from(k.publicKey.rawBytes, 'base64'), format: 'der', type: 'spki' }),
      validFor: (date) => start <= date && (!end || date <= end),
    };
  };
}

/** What the product will run: bundle JSON → signed entity → default Verifier over trusted root + npm keys. */
function verify(bundle: BundleJson, pki: { trustedRoot: TrustedRootJson; npmKeys: NpmKeysJson }, policy?: VerificationPolicy) {
  const verifier = new Verifier(toTrustMaterial(TrustedRoot.fromJSON(pki.trustedRoot), keyFinderOf(pki.npmKeys)));
  return verifier.verify(toSignedEntity(bundleFromJSON(bundle)), policy);
}

/** The error code verify() fails with ("" when it passes). */
function failure(run: () => unknown): string {
  try {
    run();
    return '';
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

const ALICE: Identity = { repository: 'https://github.com/alice/tool', workflow: '.github/workflows/release.yml', ref: 'refs/tags/v1.2.3', commit: 'a'.repeat(40) };
const TOOL = { name: '@alice/tool', version: '1.2.3', sha512hex: crypto.createHash('sha512').update('tool-1.2.3.tgz').digest('hex') };
const leafOf = (b: BundleJson): X509Certificate => X509Certificate.parse(Buffer.from(b.verificationMaterial.x509CertificateChain?.certificates[0]?.rawBytes ?? '', 'base64'));
const utf8Ext = (cert: X509Certificate, n: number): string | undefined => cert.extension(`1.3.6.1.4.1.57264.1.${n}`)?.valueObj.subs[0]?.value.toString('utf8');
const rawExt = (cert: X509Certificate, n: number): string | undefined => cert.extension(`1.3.6.1.4.1.57264.1.${n}`)?.value.toString('utf8');
const statementOf = (b: BundleJson): { _type: string; subject: { name: string; digest: Record<string, string> }[]; predicateType: string; predicate: object } =>
  JSON.parse(Buffer.from(b.dsseEnvelope.payload, 'base64').toString('utf8'));

describe('test sigstore PKI: its bundles pass the default @sigstore/verify Verifier with its own trust material', () => {
  const pki = createTestPki();

  it('a provenance bundle verifies and names the workflow as signer (SAN and issuer)', () => {
    const signer = verify(pki.provenance(TOOL, ALICE), pki, { subjectAlternativeName: `^${sanOf(ALICE).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, extensions: { issuer: GITHUB_ISSUER } });
    expect(signer.identity?.subjectAlternativeName).toBe('https://github.com/alice/tool/.github/workflows/release.yml@refs/tags/v1.2.3');
    expect(signer.identity?.extensions?.issuer).toBe(GITHUB_ISSUER);
  });

  it('the leaf carries the source repository, commit and ref it was issued for, in the Fulcio extensions', () => {
    const leaf = leafOf(pki.provenance(TOOL, ALICE));
    expect([utf8Ext(leaf, 12), utf8Ext(leaf, 13), utf8Ext(leaf, 14)]).toEqual([ALICE.repository, ALICE.commit, ALICE.ref]);
    expect([utf8Ext(leaf, 9), utf8Ext(leaf, 18), utf8Ext(leaf, 19), utf8Ext(leaf, 20)]).toEqual([sanOf(ALICE), sanOf(ALICE), ALICE.commit, 'push']);
    expect([rawExt(leaf, 1), rawExt(leaf, 3), rawExt(leaf, 5), rawExt(leaf, 6)]).toEqual([GITHUB_ISSUER, ALICE.commit, 'alice/tool', ALICE.ref]);
    expect(leaf.notAfter.getTime() - leaf.notBefore.getTime()).toBe(10 * 60_000);
  });

  it('another issuer given in the identity is what the certificate and the verifier report', () => {
    const signer = verify(pki.provenance(TOOL, { ...ALICE, issuer: 'https://issuer.example' }), pki);
    expect(signer.identity?.extensions?.issuer).toBe('https://issuer.example');
  });

  it('the publish attestation verifies with the registry key its hint names', () => {
    const b = pki.publish(TOOL);
    expect(b.verificationMaterial.publicKey?.hint).toBe(pki.npmKeys.keys[0]?.keyId);
    expect(() => verify(b, pki)).not.toThrow();
  });

  it('attestations() answers like the registry: publish then provenance, both about the purl and sha512 given', () => {
    const a = pki.attestations(TOOL, ALICE);
    expect(a.attestations.map((x) => x.predicateType)).toEqual([PREDICATE_NPM_PUBLISH_V01, PREDICATE_SLSA_PROVENANCE_V1]);
    for (const { bundle } of a.attestations) {
      expect(statementOf(bundle).subject).toEqual([{ name: 'pkg:npm/%40alice/tool@1.2.3', digest: { sha512: TOOL.sha512hex } }]);
      expect(() => verify(bundle, pki)).not.toThrow();
    }
  });

  it('bundles signed at a chosen time verify inside the PKI validity and not outside it', () => {
    const dated = createTestPki({ validFor: { start: new Date('2024-01-01T00:00:00Z'), end: new Date('2024-12-31T00:00:00Z') } });
    const inside = { signedAt: new Date('2024-06-01T12:00:00Z') };
    const after = { signedAt: new Date('2025-06-01T12:00:00Z') };
    expect(failure(() => verify(dated.provenance(TOOL, ALICE, inside), dated))).toBe('');
    expect(failure(() => verify(dated.publish(TOOL, inside), dated))).toBe('');
    expect(failure(() => verify(dated.provenance(TOOL, ALICE, after), dated))).toBe('CERTIFICATE_ERROR');
    expect(failure(() => verify(dated.publish(TOOL, after), dated))).toBe('PUBLIC_KEY_ERROR');
  });
});

describe('test sigstore PKI: what it makes is refused where it should be', () => {
  const pki = createTestPki();
  const publicGood = { trustedRoot: PUBLIC_ROOT, npmKeys: PUBLIC_NPM_KEYS };

  it('neither bundle verifies against the public-good trusted root and the real npm keys', () => {
    expect(failure(() => verify(pki.provenance(TOOL, ALICE), publicGood))).toBe('CERTIFICATE_ERROR');
    expect(failure(() => verify(pki.publish(TOOL), publicGood))).toBe('PUBLIC_KEY_ERROR');
    // Even with the test registry key accepted, the test log's entry is not the public log's.
    expect(failure(() => verify(pki.publish(TOOL), { trustedRoot: PUBLIC_ROOT, npmKeys: pki.npmKeys }))).toBe('TLOG_INCLUSION_PROMISE_ERROR');
  });

  it('another test PKI does not accept this one\'s bundles', () => {
    const other = createTestPki();
    expect(failure(() => verify(pki.provenance(TOOL, ALICE), other))).toBe('CERTIFICATE_ERROR');
    expect(failure(() => verify(pki.publish(TOOL), other))).toBe('PUBLIC_KEY_ERROR');
  });

  it('the embedded SCT is checked: without the PKI\'s CT log the leaf is refused', () => {
    expect(failure(() => verify(pki.provenance(TOOL, ALICE), { ...pki, trustedRoot: { ...pki.trustedRoot, ctlogs: [] } }))).toBe('CERTIFICATE_ERROR');
  });

  it('a tampered DSSE payload fails, in the provenance and in the publish attestation', () => {
    for (const b of [pki.provenance(TOOL, ALICE), pki.publish(TOOL)]) {
      const statement = statementOf(b);
      (statement.subject[0] as { digest: Record<string, string> }).digest.sha512 = 'f'.repeat(128);
      const tampered = { ...b, dsseEnvelope: { ...b.dsseEnvelope, payload: Buffer.from(JSON.stringify(statement)).toString('base64') } };
      expect(['TLOG_BODY_ERROR', 'SIGNATURE_ERROR']).toContain(failure(() => verify(tampered, pki)));
    }
  });

  it('an identity whose raw extension bytes @sigstore/core would re-encode differently is refused at signing', () => {
    // Workflow name bytes C2 81 05 "abcde" parse as one DER element with a non-minimal length; @sigstore/core
    // re-encodes it as C2 05 "abcde" before checking the certificate and SCT signatures, so no signature made
    // over the real bytes could pass there. The PKI throws rather than hand out a bundle that fails for that.
    expect(() => pki.provenance(TOOL, { ...ALICE, workflow: '.github/workflows/\u0081\u0005abcde.yml' })).toThrow(/re-encodes/);
  });

  it('a policy naming another workflow identity fails', () => {
    const b = pki.provenance(TOOL, ALICE);
    expect(failure(() => verify(b, pki, { subjectAlternativeName: '^https://github\\.com/mallory/tool/' }))).toBe('UNTRUSTED_SIGNER_ERROR');
    expect(failure(() => verify(b, pki, { extensions: { issuer: 'https://accounts.google.com' } }))).toBe('UNTRUSTED_SIGNER_ERROR');
  });
});

/** A JSON value's shape: objects by key (sorted), arrays by their first element, leaves by type. */
function shapeOf(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? [shapeOf(v[0])] : [];
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shapeOf(x)]));
  return typeof v;
}
const bodyOf = (b: BundleJson): unknown => JSON.parse(Buffer.from(b.verificationMaterial.tlogEntries[0]?.canonicalizedBody ?? '', 'base64').toString('utf8'));

describe('the real npm answer these bundles copy', () => {
  const real = realAttestations('gundam-visor-cli-v1-tag.tgz.json');
  const publicGood = { trustedRoot: PUBLIC_ROOT, npmKeys: PUBLIC_NPM_KEYS };

  it('verifies with the public-good trusted root and npm keys (@sigstore/tuf seeds), signed by its workflow', () => {
    const signer = verify(bundleOf(real, PREDICATE_SLSA_PROVENANCE_V1), publicGood);
    expect(signer.identity?.subjectAlternativeName).toBe('https://github.com/ramonpetgrave64/gundam-visor/.github/workflows/npm-publish.yml@refs/tags/v1.0.1');
    expect(signer.identity?.extensions?.issuer).toBe(GITHUB_ISSUER);
    expect(() => verify(bundleOf(real, PREDICATE_NPM_PUBLISH_V01), publicGood)).not.toThrow();
    const tarball = fs.readFileSync(path.join(FIXTURES, 'gundam-visor-cli-v1-tag.tgz'));
    expect(statementOf(bundleOf(real, PREDICATE_SLSA_PROVENANCE_V1)).subject[0]?.digest.sha512).toBe(crypto.createHash('sha512').update(tarball).digest('hex'));
  });

  it('its copies with a broken provenance or publish signature do not verify', () => {
    expect(failure(() => verify(bundleOf(realAttestations('gundam-visor-cli-v1-tag-invalidsigprov.tgz.json'), PREDICATE_SLSA_PROVENANCE_V1), publicGood))).not.toBe('');
    expect(failure(() => verify(bundleOf(realAttestations('gundam-visor-cli-v1-tag-invalidsigpub.tgz.json'), PREDICATE_NPM_PUBLISH_V01), publicGood))).not.toBe('');
  });

  it('has the shape of the test PKI\'s: bundle, tlog body, statement, attestations list and trust files', () => {
    const pki = createTestPki();
    const ours = pki.attestations({ name: 'gundam-visor', version: '1.0.1', sha512hex: 'ab'.repeat(64) }, ALICE);
    expect(shapeOf(ours)).toEqual(shapeOf(real));
    for (const type of [PREDICATE_NPM_PUBLISH_V01, PREDICATE_SLSA_PROVENANCE_V1]) {
      const [mine, theirs] = [bundleOf(ours, type), bundleOf(real, type)];
      expect(mine.mediaType).toBe(theirs.mediaType);
      expect(mine.verificationMaterial.tlogEntries[0]?.kindVersion).toEqual(theirs.verificationMaterial.tlogEntries[0]?.kindVersion);
      expect(shapeOf(bodyOf(mine))).toEqual(shapeOf(bodyOf(theirs)));
      expect(shapeOf(statementOf(mine))).toEqual(shapeOf(statementOf(theirs)));
      expect(statementOf(mine)._type).toBe(statementOf(theirs)._type);
    }
    // Trust entries compared with public-good ones that, like ours by default, have no end of validity.
    expect(shapeOf(pki.trustedRoot.tlogs[0])).toEqual(shapeOf(PUBLIC_ROOT.tlogs.find((l) => !l.publicKey.validFor.end)));
    expect(shapeOf(pki.trustedRoot.ctlogs[0])).toEqual(shapeOf(PUBLIC_ROOT.ctlogs.find((l) => !l.publicKey.validFor.end)));
    expect(shapeOf(pki.trustedRoot.certificateAuthorities[0])).toEqual(shapeOf(PUBLIC_ROOT.certificateAuthorities.find((c) => !c.validFor.end)));
    const current = PUBLIC_NPM_KEYS.keys.find((k) => k.keyUsage === 'npm:attestations' && !k.publicKey.validFor.end);
    expect(shapeOf(pki.npmKeys.keys[0])).toEqual(shapeOf(current));
    // The registry's key ids are derived from the keys as ours are.
    for (const k of PUBLIC_NPM_KEYS.keys) expect(npmKeyIdOf(Buffer.from(k.publicKey.rawBytes, 'base64'))).toBe(k.keyId);
  });

  it('its leaf has the Fulcio extensions of the test PKI\'s, in the same order', () => {
    const oids = (c: X509Certificate): string[] => c.extensions.map((e) => e.subs[0]?.toOID() ?? '');
    expect(oids(leafOf(createTestPki().provenance(TOOL, ALICE)))).toEqual(oids(leafOf(bundleOf(real, PREDICATE_SLSA_PROVENANCE_V1))));
  });
});
