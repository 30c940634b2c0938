import crypto from 'node:crypto';
import { dsse } from '@sigstore/core';
import { type Ca, type Identity, type Key, caCert, fulcioLeaf, logIdOf, newKey, numericId, pem } from './sigstore-cert.js';
import { LocalRekor, type TlogEntryJson } from './sigstore-log.js';

// A local test sigstore instance: a Fulcio-like CA, a CT log, a Rekor-like transparency log and an npm registry
// attestation key, with the trusted_root.json and keys.json that name them. Its bundles have the shape of the npm
// registry's (see test/provenance/test-pki.test.ts, which checks a real one against the same verifier) and pass
// @sigstore/verify's Verifier at its default thresholds with this PKI's trust material — and only with it: every
// key is generated per createTestPki call, so nothing made here verifies against the public-good instance.

export type { Identity } from './sigstore-cert.js';
export { GITHUB_ISSUER, sanOf } from './sigstore-cert.js';

export const PREDICATE_SLSA_PROVENANCE_V1 = 'https://slsa.dev/provenance/v1';
export const PREDICATE_NPM_PUBLISH_V01 = 'https://github.com/npm/attestation/tree/main/specs/publish/v0.1';
const BUNDLE_V02 = 'application/vnd.dev.sigstore.bundle+json;version=0.2';
const IN_TOTO = 'application/vnd.in-toto+json';

/** The local services' names (`.test` is reserved, RFC 2606); the checkpoint signer is Rekor's host. */
export const TEST_PKI_URLS = { fulcio: 'https://fulcio.sigstore.test', rekor: 'https://rekor.sigstore.test', ctlog: 'https://ctfe.sigstore.test/test' } as const;

interface ValidForJson {
  start: string;
  end?: string;
}
interface LogJson {
  baseUrl: string;
  hashAlgorithm: 'SHA2_256';
  publicKey: { rawBytes: string; keyDetails: 'PKIX_ECDSA_P256_SHA_256'; validFor: ValidForJson };
  logId: { keyId: string };
}
/** sigstore TrustedRoot JSON (mediaType application/vnd.dev.sigstore.trustedroot+json;version=0.1). */
export interface TrustedRootJson {
  mediaType: string;
  tlogs: LogJson[];
  certificateAuthorities: { subject: { organization: string; commonName: string }; uri: string; certChain: { certificates: { rawBytes: string }[] }; validFor: ValidForJson }[];
  ctlogs: LogJson[];
  timestampAuthorities: never[];
}
/** registry.npmjs.org/-/npm/v1/keys shape. */
export interface NpmKeysJson {
  keys: { keyId: string; keyUsage: string; publicKey: { rawBytes: string; keyDetails: 'PKIX_ECDSA_P256_SHA_256'; validFor: ValidForJson } }[];
}
/** A sigstore bundle (v0.2, DSSE) as the npm registry serves it. */
export interface BundleJson {
  mediaType: string;
  verificationMaterial: {
    x509CertificateChain?: { certificates: { rawBytes: string }[] };
    publicKey?: { hint: string };
    tlogEntries: TlogEntryJson[];
    timestampVerificationData: { rfc3161Timestamps: { signedTimestamp: string }[] };
  };
  dsseEnvelope: { payload: string; payloadType: string; signatures: { sig: string; keyid: string }[] };
}
/** The registry's attestations endpoint body (GET /-/npm/v1/attestations/<name>@<version>). */
export interface AttestationsJson {
  attestations: { predicateType: string; bundle: BundleJson }[];
}

export interface TestPki {
  trustedRoot: TrustedRootJson;
  npmKeys: NpmKeysJson;
}

/** What an attestation is about: the package tarball, by name, version and SHA-512 (hex). */
export interface Subject {
  name: string;
  version: string;
  sha512hex: string;
}

export interface SignOptions {
  /** When the signature is made and logged (default now): the leaf is valid for 10 minutes from it. */
  signedAt?: Date;
  /** Sign the npm publish attestation with a Fulcio certificate for this CI identity instead of the registry's key
   *  (what anyone with a sigstore identity can make: not the registry's word). */
  publishSignedBy?: Identity;
}

export interface TestSigstore extends TestPki {
  /** SLSA v1 provenance bundle (DSSE, in-toto Statement v1) signed by a fresh 10-minute Fulcio leaf for `identity`. */
  provenance(subject: Subject, identity: Identity, opts?: SignOptions): BundleJson;
  /** npm publish attestation bundle (in-toto Statement v0.1) signed with the registry key; publicKey.hint = its keyId. */
  publish(subject: Subject, opts?: SignOptions): BundleJson;
  /** A keyless sigstore bundle v0.3 with a messageSignature over `artifact` (what `cosign sign-blob --new-bundle-format`
   *  makes): a fresh Fulcio leaf for `identity`, logged as a hashedrekord entry. */
  messageSignature(artifact: Buffer, identity: Identity, opts?: SignOptions): object;
  /** Both, as the registry's attestations endpoint serves them (publish first, as the registry orders them). */
  attestations(subject: Subject, identity: Identity, opts?: SignOptions): AttestationsJson;
  /** What this instance's Fulcio issues to the key `spki` (SubjectPublicKeyInfo DER) for `identity`: the leaf, then
   *  the chain above it (intermediate, root), DER; for a Fulcio stand-in over loopback. */
  certify(spki: Buffer, identity: Identity, issuedAt?: Date): Buffer[];
  /** This instance's transparency log, for a Rekor stand-in over loopback. */
  rekor: LocalRekor;
}

/** Package URL of an npm package: `pkg:npm/<name>@<version>`, a scope's "@" percent-encoded. */
export function purlOf(name: string, version: string): string {
  return `pkg:npm/${name.startsWith('@') ? `%40${name.slice(1)}` : name}@${version}`;
}

/**
 * The registry's key id: the key's OpenSSH SHA256 fingerprint — unpadded base64 of SHA-256 over the SSH wire form
 * (string "ecdsa-sha2-nistp256", string "nistp256", string EC point), not over the SPKI DER.
 */
export function npmKeyIdOf(spki: Buffer): string {
  const sshString = (b: Buffer): Buffer => Buffer.concat([Buffer.from([0, 0, b.length >> 8, b.length & 0xff]), b]);
  const wire = Buffer.concat([sshString(Buffer.from('ecdsa-sha2-nistp256')), sshString(Buffer.from('nistp256')), sshString(spki.subarray(spki.length - 65))]);
  return `SHA256:${crypto.createHash('sha256').update(wire).digest('base64').replace(/=+$/, '')}`;
}

const DEFAULT_START = new Date('2020-01-01T00:00:00Z');
const FAR_FUTURE = new Date('2099-12-31T23:59:59Z');

function validForJson(v: { start: Date; end?: Date }): ValidForJson {
  return v.end ? { start: v.start.toISOString(), end: v.end.toISOString() } : { start: v.start.toISOString() };
}

function logJson(baseUrl: string, key: Key, validFor: ValidForJson): LogJson {
  return {
    baseUrl,
    hashAlgorithm: 'SHA2_256',
    publicKey: { rawBytes: key.spki.toString('base64'), keyDetails: 'PKIX_ECDSA_P256_SHA_256', validFor },
    logId: { keyId: logIdOf(key).toString('base64') },
  };
}

/** The SLSA v1 predicate npm's CLI writes for a GitHub Actions build (the real bundle's fields, same order). */
function slsaPredicate(id: Identity, runId: string): object {
  return {
    buildDefinition: {
      buildType: 'https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1',
      externalParameters: { workflow: { ref: id.ref, repository: id.repository, path: id.workflow } },
      internalParameters: {
        github: { event_name: 'push', repository_id: numericId(id.repository), repository_owner_id: numericId(id.repository.slice(0, id.repository.lastIndexOf('/'))) },
      },
      resolvedDependencies: [{ uri: `git+${id.repository}@${id.ref}`, digest: { gitCommit: id.commit } }],
    },
    runDetails: { builder: { id: 'https://github.com/actions/runner/github-hosted' }, metadata: { invocationId: `${id.repository}/actions/runs/${runId}/attempts/1` } },
  };
}

/**
 * A fresh test sigstore instance. `validFor` bounds the CA, both logs and the npm key, in their certificates and in
 * trustedRoot / npmKeys (default: from 2020-01-01, no end); sign inside it or verification fails, as it should.
 */
export function createTestPki(opts?: { validFor?: { start: Date; end?: Date } }): TestSigstore {
  const validFor = { start: opts?.validFor?.start ?? DEFAULT_START, end: opts?.validFor?.end };
  const vf = validForJson(validFor);
  const certEnd = validFor.end ?? FAR_FUTURE;
  const organization = 'mcp-warden test PKI';
  const root: Ca = caCert({ organization, commonName: 'test-fulcio-root', notBefore: validFor.start, notAfter: certEnd, pathLen: 1 });
  const ca: Ca = caCert({ organization, commonName: 'test-fulcio-intermediate', issuer: root, notBefore: validFor.start, notAfter: certEnd, pathLen: 0 });
  const ctlog = newKey();
  const rekor = new LocalRekor(TEST_PKI_URLS.rekor);
  const npmKey = newKey();
  const npmKeyId = npmKeyIdOf(npmKey.spki);
  let runs = 0;

  const trustedRoot: TrustedRootJson = {
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: [logJson(TEST_PKI_URLS.rekor, rekor.key, vf)],
    certificateAuthorities: [
      {
        subject: { organization, commonName: root.commonName },
        uri: TEST_PKI_URLS.fulcio,
        certChain: { certificates: [{ rawBytes: ca.der.toString('base64') }, { rawBytes: root.der.toString('base64') }] },
        validFor: vf,
      },
    ],
    ctlogs: [logJson(TEST_PKI_URLS.ctlog, ctlog, vf)],
    timestampAuthorities: [],
  };
  const npmKeys: NpmKeysJson = {
    keys: [{ keyId: npmKeyId, keyUsage: 'npm:attestations', publicKey: { rawBytes: npmKey.spki.toString('base64'), keyDetails: 'PKIX_ECDSA_P256_SHA_256', validFor: vf } }],
  };

  /** Signs an in-toto statement as DSSE, logs it, and wraps both in a bundle with `material` as the key. */
  function bundle(statement: object, signer: Key, keyid: string, verifierPem: string, material: Pick<BundleJson['verificationMaterial'], 'x509CertificateChain' | 'publicKey'>, signedAt: Date): BundleJson {
    const payload = Buffer.from(JSON.stringify(statement), 'utf8');
    const sig = crypto.sign('sha256', dsse.preAuthEncoding(IN_TOTO, payload), signer.privateKey);
    const entry = rekor.logIntoto({ payloadType: IN_TOTO, payload, sig, keyid }, verifierPem, Math.floor(signedAt.getTime() / 1000));
    return {
      mediaType: BUNDLE_V02,
      verificationMaterial: { ...material, tlogEntries: [entry], timestampVerificationData: { rfc3161Timestamps: [] } },
      dsseEnvelope: { payload: payload.toString('base64'), payloadType: IN_TOTO, signatures: [{ sig: sig.toString('base64'), keyid }] },
    };
  }

  const subjectOf = (s: Subject): object[] => [{ name: purlOf(s.name, s.version), digest: { sha512: s.sha512hex } }];

  function provenance(subject: Subject, identity: Identity, o?: SignOptions): BundleJson {
    const signedAt = o?.signedAt ?? new Date();
    const runId = String(9_000_000_000 + ++runs);
    const leafKey = newKey(); // the ephemeral key the CI job signs with
    const leaf = fulcioLeaf({ ca, ctlog, spki: leafKey.spki, identity, runId, issuedAt: signedAt });
    const statement = { _type: 'https://in-toto.io/Statement/v1', subject: subjectOf(subject), predicateType: PREDICATE_SLSA_PROVENANCE_V1, predicate: slsaPredicate(identity, runId) };
    return bundle(statement, leafKey, '', pem('CERTIFICATE', leaf), { x509CertificateChain: { certificates: [{ rawBytes: leaf.toString('base64') }] } }, signedAt);
  }

  function messageSignature(artifact: Buffer, identity: Identity, o?: SignOptions): object {
    const signedAt = o?.signedAt ?? new Date();
    const leafKey = newKey();
    const leaf = fulcioLeaf({ ca, ctlog, spki: leafKey.spki, identity, runId: String(9_000_000_000 + ++runs), issuedAt: signedAt });
    const digest = crypto.createHash('sha256').update(artifact).digest();
    const sig = crypto.sign('sha256', artifact, leafKey.privateKey);
    const entry = rekor.logHashedRekord(sig, digest, pem('CERTIFICATE', leaf), Math.floor(signedAt.getTime() / 1000));
    return {
      mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
      verificationMaterial: { certificate: { rawBytes: leaf.toString('base64') }, tlogEntries: [entry], timestampVerificationData: { rfc3161Timestamps: [] } },
      messageSignature: { messageDigest: { algorithm: 'SHA2_256', digest: digest.toString('base64') }, signature: sig.toString('base64') },
    };
  }

  function publish(subject: Subject, o?: SignOptions): BundleJson {
    const signedAt = o?.signedAt ?? new Date();
    const statement = {
      _type: 'https://in-toto.io/Statement/v0.1',
      subject: subjectOf(subject),
      predicateType: PREDICATE_NPM_PUBLISH_V01,
      predicate: { name: subject.name, version: subject.version, registry: 'https://registry.npmjs.org' },
    };
    // The registry logs its key as one unwrapped base64 line (unlike certificates), as the real entries show.
    if (o?.publishSignedBy) {
      const leafKey = newKey();
      const leaf = fulcioLeaf({ ca, ctlog, spki: leafKey.spki, identity: o.publishSignedBy, runId: String(9_000_000_000 + ++runs), issuedAt: signedAt });
      return bundle(statement, leafKey, '', pem('CERTIFICATE', leaf), { x509CertificateChain: { certificates: [{ rawBytes: leaf.toString('base64') }] } }, signedAt);
    }
    return bundle(statement, npmKey, npmKeyId, pem('PUBLIC KEY', npmKey.spki, false), { publicKey: { hint: npmKeyId } }, signedAt);
  }

  function attestations(subject: Subject, identity: Identity, o?: SignOptions): AttestationsJson {
    return {
      attestations: [
        { predicateType: PREDICATE_NPM_PUBLISH_V01, bundle: publish(subject, o) },
        { predicateType: PREDICATE_SLSA_PROVENANCE_V1, bundle: provenance(subject, identity, o) },
      ],
    };
  }

  function certify(spki: Buffer, identity: Identity, issuedAt = new Date()): Buffer[] {
    return [fulcioLeaf({ ca, ctlog, spki, identity, runId: String(9_000_000_000 + ++runs), issuedAt }), ca.der, root.der];
  }

  return { trustedRoot, npmKeys, provenance, publish, messageSignature, attestations, certify, rekor };
}
