import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyNpmAttestations } from '../../dist/provenance/npm-attestations.js';
import { SHIPPED_TRUST_ROOT } from '../../dist/provenance/shipped-root.js';
import { openTrustRoot } from '../../dist/provenance/trust-root.js';
import { NPM_PROVENANCE_FIXTURES, trustRootOf } from '../helpers/provenance-registry.js';
import { type Identity, createTestPki } from '../helpers/sigstore-pki.js';

// verifyNpmAttestations (the built module) against the real npm registry answer for gundam-visor@1.0.1 and its
// two copies with a broken signature (test/fixtures/sigstore/npm-provenance/), with the trust root shipped with
// mcp-warden; and, for a scoped name, against bundles of the local test sigstore instance, which stand for a
// genuine release of @mcp-warden-test/scoped built by the identity below.

const read = (file: string): unknown => JSON.parse(fs.readFileSync(path.join(NPM_PROVENANCE_FIXTURES, file), 'utf8'));
const SHIPPED = openTrustRoot(SHIPPED_TRUST_ROOT, 'shipped with mcp-warden');
const TARBALL_SHA512 = crypto.createHash('sha512').update(fs.readFileSync(path.join(NPM_PROVENANCE_FIXTURES, 'gundam-visor-cli-v1-tag.tgz'))).digest('hex');
const GUNDAM = { name: 'gundam-visor', version: '1.0.1', sha512hex: TARBALL_SHA512 };

/** The stable code a verification fails with ('' when it passes). */
function refusal(run: () => unknown): string {
  try {
    run();
    return '';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

describe('verifyNpmAttestations: a real npm release, with the shipped trust root', () => {
  it('returns who built it, read from the Fulcio certificate: repository, workflow, ref, commit, issuer', () => {
    const v = verifyNpmAttestations(read('gundam-visor-cli-v1-tag.tgz.json'), GUNDAM, SHIPPED);
    expect(v.identity).toMatchObject({
      issuer: 'https://token.actions.githubusercontent.com',
      repository: 'https://github.com/ramonpetgrave64/gundam-visor',
      workflow: '.github/workflows/npm-publish.yml',
      ref: 'refs/tags/v1.0.1',
      commit: '599500821344b070902a7a5666064bfdaba715df',
      san: 'https://github.com/ramonpetgrave64/gundam-visor/.github/workflows/npm-publish.yml@refs/tags/v1.0.1',
    });
    expect(v.predicateType).toBe('https://slsa.dev/provenance/v1');
    expect(v.signedAt).toBe('2024-06-03T22:17:59.000Z');
  });

  it('refuses the copy with a broken provenance signature, and the one with a broken publish signature: PROVENANCE_INVALID', () => {
    expect(refusal(() => verifyNpmAttestations(read('gundam-visor-cli-v1-tag-invalidsigprov.tgz.json'), GUNDAM, SHIPPED))).toBe('PROVENANCE_INVALID');
    expect(refusal(() => verifyNpmAttestations(read('gundam-visor-cli-v1-tag-invalidsigpub.tgz.json'), GUNDAM, SHIPPED))).toBe('PROVENANCE_INVALID');
  });

  it('refuses valid attestations for other bytes, another version or another name: PROVENANCE_SUBJECT_MISMATCH', () => {
    const doc = read('gundam-visor-cli-v1-tag.tgz.json');
    expect(refusal(() => verifyNpmAttestations(doc, { ...GUNDAM, sha512hex: 'ab'.repeat(64) }, SHIPPED))).toBe('PROVENANCE_SUBJECT_MISMATCH');
    expect(refusal(() => verifyNpmAttestations(doc, { ...GUNDAM, version: '1.0.2' }, SHIPPED))).toBe('PROVENANCE_SUBJECT_MISMATCH');
    expect(refusal(() => verifyNpmAttestations(doc, { ...GUNDAM, name: 'gundam-visor-cli' }, SHIPPED))).toBe('PROVENANCE_SUBJECT_MISMATCH');
  });

  it('refuses a document with the publish attestation alone (no provenance: PROVENANCE_MISSING) or the provenance alone (PROVENANCE_INVALID)', () => {
    const doc = read('gundam-visor-cli-v1-tag.tgz.json') as { attestations: { predicateType: string }[] };
    const only = (slsa: boolean) => ({ attestations: doc.attestations.filter((a) => a.predicateType.startsWith('https://slsa.dev/') === slsa) });
    expect(refusal(() => verifyNpmAttestations(only(false), GUNDAM, SHIPPED))).toBe('PROVENANCE_MISSING');
    expect(refusal(() => verifyNpmAttestations(only(true), GUNDAM, SHIPPED))).toBe('PROVENANCE_INVALID');
  });
});

describe('verifyNpmAttestations: a scoped package, signed by the test sigstore instance', () => {
  const pki = createTestPki();
  const root = openTrustRoot(trustRootOf(pki, new Date()), 'the test PKI');
  const id: Identity = { repository: 'https://github.com/mcp-warden-test/scoped', workflow: '.github/workflows/release.yml', ref: 'refs/tags/v2.0.0', commit: 'c'.repeat(40) };
  const subject = { name: '@mcp-warden-test/scoped', version: '2.0.0', sha512hex: crypto.createHash('sha512').update('scoped-2.0.0.tgz').digest('hex') };

  it('matches the statement\'s pkg:npm/%40scope/name@version purl to the scoped name', () => {
    const doc = pki.attestations(subject, id, { signedAt: new Date(Date.now() - 60_000) });
    const purls = doc.attestations.map((a) => (JSON.parse(Buffer.from(a.bundle.dsseEnvelope.payload, 'base64').toString('utf8')) as { subject: { name: string }[] }).subject[0]?.name);
    expect(purls).toEqual(['pkg:npm/%40mcp-warden-test/scoped@2.0.0', 'pkg:npm/%40mcp-warden-test/scoped@2.0.0']);
    expect(verifyNpmAttestations(doc, subject, root).identity).toMatchObject({ repository: id.repository, workflow: id.workflow, ref: id.ref, commit: id.commit });
    expect(refusal(() => verifyNpmAttestations(doc, { ...subject, name: '@mallory/scoped' }, root))).toBe('PROVENANCE_SUBJECT_MISMATCH');
  });
});
