import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { BUNDLE_V03_MEDIA_TYPE, bundleFromJSON, bundleToJSON, toMessageSignatureBundle, type Bundle, type SerializedBundle } from '@sigstore/bundle';
import { TrustedRoot } from '@sigstore/protobuf-specs';
import { toSignedEntity, toTrustMaterial, Verifier, VerificationError } from '@sigstore/verify';
import { WardenError } from '../error.js';
import { identityOf, matchesIdentity, matchesIdentityPattern, type PublisherIdentity } from '../provenance/identity.js';
import { describeStaleness, leafOf, staleFor } from '../provenance/stale-root.js';
import type { TrustRoot } from '../provenance/trust-root.js';

// The signature of a trust bundle: a sigstore bundle (media type v0.3) with a messageSignature over the bundle
// file's bytes, written to FILE.sigstore.json. A local key (ECDSA P-256 or Ed25519) names itself by a hint, the
// sha256 of its SubjectPublicKeyInfo; a keyless signature carries a Fulcio certificate and a Rekor entry
// (docs/adr/0023-trust-bundles.md).

/** How a signature must have been made: by this public key, or keyless by this identity. */
export type SignerPolicy = { key: KeyObject; keyFile: string } | { identity: string; issuer: string; root: TrustRoot };

/** What a machine pins, as one string: the serial of the bundles it applies counts within one pinned signer
 *  (bundle-state.json `applied.pinned`). */
export function pinnedSignerOf(policy: SignerPolicy): string {
  return 'key' in policy ? `key ${keyHint(policy.key)}` : `identity ${policy.identity} issuer ${policy.issuer}`;
}

/** The hint a local key is named by in the sigstore bundle: sha256 of its DER SubjectPublicKeyInfo, hex. */
export function keyHint(key: KeyObject): string {
  return createHash('sha256').update(key.export({ type: 'spki', format: 'der' })).digest('hex');
}

function keyKind(key: KeyObject, file: string): 'ecdsa-p256' | 'ed25519' {
  if (key.asymmetricKeyType === 'ed25519') return 'ed25519';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ecdsa-p256';
  throw new WardenError('BUNDLE_KEY_INVALID', `the key in ${file} is ${key.asymmetricKeyType}${key.asymmetricKeyDetails?.namedCurve ? ` (${key.asymmetricKeyDetails.namedCurve})` : ''}; expected an ECDSA P-256 or Ed25519 key in PEM. Make one with: openssl genpkey -algorithm ed25519 -out bundle-key.pem`);
}

export function readPrivateKey(pem: string, file: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (err) {
    throw new WardenError('BUNDLE_KEY_INVALID', `${file} is not a private key in PEM (${(err as Error).message}). Give the signing key, e.g. one made with: openssl genpkey -algorithm ed25519 -out bundle-key.pem`);
  }
}

export function readPublicKey(pem: string, file: string): KeyObject {
  try {
    return createPublicKey(pem);
  } catch (err) {
    throw new WardenError('BUNDLE_KEY_INVALID', `${file} is not a public key in PEM (${(err as Error).message}). Give the signer's public key, e.g. from: openssl pkey -in bundle-key.pem -pubout`);
  }
}

/** Signs the bundle's bytes with a local key; returns the sigstore bundle to write beside it. */
export function signWithKey(bytes: Buffer, key: KeyObject, keyFile: string): SerializedBundle {
  const kind = keyKind(key, keyFile);
  const signature = sign(kind === 'ed25519' ? null : 'sha256', bytes, key);
  const b = toMessageSignatureBundle({ digest: createHash('sha256').update(bytes).digest(), signature, keyHint: keyHint(createPublicKey(key)) });
  return bundleToJSON({ ...b, mediaType: BUNDLE_V03_MEDIA_TYPE });
}

function bad(sigFile: string, why: string, cause?: unknown): WardenError {
  return new WardenError('BUNDLE_SIGNATURE_INVALID', `the signature ${sigFile} does not verify the trust bundle: ${why}. The bundle or its signature was changed, or they do not belong together; nothing was changed. Get both again from the signer.`, { cause });
}

function parseSignature(text: string, sigFile: string): Bundle {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw bad(sigFile, `it is not JSON (${(err as Error).message})`);
  }
  try {
    const b = bundleFromJSON(json);
    if (b.mediaType !== BUNDLE_V03_MEDIA_TYPE) throw new Error(`media type ${b.mediaType}, expected ${BUNDLE_V03_MEDIA_TYPE}`);
    if (b.content.$case !== 'messageSignature') throw new Error('it holds a DSSE envelope, expected a messageSignature');
    return b;
  } catch (err) {
    throw bad(sigFile, `it is not a sigstore bundle as 'bundle sign' writes them (${(err as Error).message})`);
  }
}

const EMPTY_ROOT = TrustedRoot.fromJSON({ mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1', tlogs: [], certificateAuthorities: [], ctlogs: [], timestampAuthorities: [] });

/** Verifies the signature over `bytes` against the pinned signer; returns how the signer is named (for the audit). */
export function verifySignature(bytes: Buffer, sigText: string, sigFile: string, policy: SignerPolicy): string {
  const b = parseSignature(sigText, sigFile);
  const material = b.verificationMaterial.content;
  if ('key' in policy) {
    if (material.$case !== 'publicKey') throw new WardenError('BUNDLE_UNTRUSTED_SIGNER', `${sigFile} is signed keyless (by a certificate), but --key ${policy.keyFile} pins a key; nothing was changed. Verify it with --identity and --issuer, or ask for a bundle signed with the pinned key.`);
    const expected = keyHint(policy.key);
    if (material.publicKey.hint !== expected) throw new WardenError('BUNDLE_UNTRUSTED_SIGNER', `${sigFile} was signed by the key with hint ${material.publicKey.hint}, expected the key of ${policy.keyFile} (hint ${expected}); nothing was changed. The bundle is not from the pinned signer.`);
    const kind = keyKind(policy.key, policy.keyFile);
    if (kind === 'ed25519') {
      // @sigstore/verify 3.1.1 hashes the message for every key type, which Ed25519 (PureEdDSA) refuses: checked here.
      const sig = b.content.$case === 'messageSignature' ? b.content.messageSignature : undefined;
      if (!sig || !sig.messageDigest || !createHash('sha256').update(bytes).digest().equals(sig.messageDigest.digest)) throw bad(sigFile, 'its message digest is not the sha256 of the bundle file');
      if (!verify(null, bytes, policy.key, sig.signature)) throw bad(sigFile, 'the Ed25519 signature does not match');
      return `key ${expected}`;
    }
    const tm = toTrustMaterial(EMPTY_ROOT, () => ({ publicKey: policy.key, validFor: () => true }));
    try {
      new Verifier(tm, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 }).verify(toSignedEntity(b, bytes));
    } catch (err) {
      if (err instanceof VerificationError) throw bad(sigFile, `${err.code}: ${err.message}`);
      throw err;
    }
    return `key ${expected}`;
  }
  if (material.$case === 'publicKey') throw new WardenError('BUNDLE_UNTRUSTED_SIGNER', `${sigFile} is signed with a local key (hint ${material.publicKey.hint}), but --identity pins a keyless signer; nothing was changed. Verify it with --key, or ask for a keyless signature.`);
  const { san, issuer, build } = verifyKeyless(b, bytes, sigFile, policy.root);
  // The pattern is anchored (sigstore-js's own SAN policy is an unanchored regular expression). A CI certificate
  // whose SAN names a reusable workflow of another repository must match with the calling workflow too, as for
  // `install --identity`: else any repository calling the pinned owner's reusable workflow would match.
  const matches = build ? matchesIdentity(policy.identity, build) : matchesIdentityPattern(policy.identity, san);
  if (!matches || issuer !== policy.issuer) {
    throw new WardenError('BUNDLE_UNTRUSTED_SIGNER', `${sigFile} was signed by ${san} (issuer ${issuer}), expected ${policy.identity} (issuer ${policy.issuer}); nothing was changed. The bundle is not from the pinned signer.`);
  }
  return `${san} (issuer ${issuer})`;
}

/** Who made a keyless signature: the Fulcio certificate's subject alternative name and OIDC issuer, and for a CI
 *  certificate (one naming a source repository) the build it describes. */
export interface KeylessSigner {
  san: string;
  issuer: string;
  build?: PublisherIdentity;
}

/** The CI build a verified certificate describes, or undefined for one that names no source repository (a person). */
function buildOf(b: Bundle, san: string, issuer: string): PublisherIdentity | undefined {
  const leaf = leafOf(b);
  if (!leaf) return undefined;
  try {
    return identityOf(leaf, san, issuer, 'the trust bundle');
  } catch (err) {
    if (err instanceof WardenError) return undefined;
    throw err;
  }
}

/**
 * Verifies a keyless signature (Fulcio certificate, SCT, Rekor entry, signature over `bytes`) against the sigstore
 * trust root, with sigstore's default thresholds; says TRUST_ROOT_STALE, as the provenance path does, when a newer
 * root could verify it. The identity is the caller's to judge.
 */
export function verifyKeyless(b: Bundle, bytes: Buffer, sigFile: string, root: TrustRoot): KeylessSigner {
  let signer;
  try {
    signer = new Verifier(root.material).verify(toSignedEntity(b, bytes));
  } catch (err) {
    if (!(err instanceof VerificationError)) throw err;
    const stale = staleFor(b, root);
    if (stale) {
      throw new WardenError('TRUST_ROOT_STALE', `the signature ${sigFile} was ${describeStaleness(stale, root)}. Update it with 'mcp-warden trust-root update' (or --from FILE offline), then try again; nothing was changed. If it still fails with the newest root, no sigstore key vouches for it: treat the bundle as forged.`);
    }
    throw bad(sigFile, `${err.code}: ${err.message} (trust root ${root.origin})`, err);
  }
  const san = signer.identity?.subjectAlternativeName ?? '';
  const issuer = signer.identity?.extensions?.issuer ?? '';
  const build = buildOf(b, san, issuer);
  return { san, issuer, ...(build ? { build } : {}) };
}

/** Parses a signature as `bundle sign` writes it (for a signature just made, before it is written). */
export function parseOwnSignature(json: SerializedBundle, sigFile: string): Bundle {
  return parseSignature(JSON.stringify(json), sigFile);
}
