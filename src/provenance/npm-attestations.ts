import { createHash } from 'node:crypto';
import { bundleFromJSON, type Bundle } from '@sigstore/bundle';
import { toSignedEntity, Verifier, VerificationError } from '@sigstore/verify';
import { WardenError } from '../error.js';
import { identityOf, type PublisherIdentity } from './identity.js';
import { checkSubject, type Subject } from './statement.js';
import { describeStaleness, leafOf, signingTime, staleFor } from './stale-root.js';
import type { TrustRoot } from './trust-root.js';

// The two attestations the npm registry serves for a package published with provenance
// (GET /-/npm/v1/attestations/<name>@<version> → {"attestations": [...]}), verified offline:
//   - the SLSA provenance (https://slsa.dev/provenance/v1, or v0.2 from 2023), a DSSE envelope signed by a
//     short-lived Fulcio certificate issued to the CI run that built the package: it says who built it;
//   - the npm publish attestation, signed with the registry's own key: it says the registry accepted exactly
//     this tarball under this name and version.
// Both must verify, with sigstore-js's default thresholds (one transparency-log entry, one SCT, one
// timestamp), and both must name pkg:npm/<name>@<version> with the sha512 of the very tarball being
// installed: a provenance checked against name@version only would let a swapped tarball through.

export const SLSA_PROVENANCE = ['https://slsa.dev/provenance/v1', 'https://slsa.dev/provenance/v0.2'];
export const NPM_PUBLISH = 'https://github.com/npm/attestation/tree/main/specs/publish/v0.1';
const MAX_ATTESTATIONS = 16;

export interface VerifiedProvenance {
  identity: PublisherIdentity;
  /** When the provenance was signed (its transparency-log time). */
  signedAt?: string;
  predicateType: string;
}

interface Attestation {
  predicateType: string;
  bundle: Bundle;
}

/** The attestations of a registry answer, or a refusal naming what is wrong with its shape. */
function attestationsOf(doc: unknown, label: string): Attestation[] {
  const list = doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? (doc as { attestations?: unknown }).attestations : undefined;
  if (!Array.isArray(list)) throw new WardenError('PROVENANCE_INVALID', `the attestations of ${label} are not the registry's format ({"attestations": [...]}); nothing was installed.`);
  if (list.length > MAX_ATTESTATIONS) throw new WardenError('PROVENANCE_INVALID', `the registry sent ${list.length} attestations for ${label} (at most ${MAX_ATTESTATIONS} are read); nothing was installed.`);
  return list.map((a: unknown, i) => {
    const item = a as { predicateType?: unknown; bundle?: unknown } | null;
    if (!item || typeof item.predicateType !== 'string' || typeof item.bundle !== 'object' || item.bundle === null) {
      throw new WardenError('PROVENANCE_INVALID', `attestation ${i} of ${label} has no predicateType or bundle; nothing was installed.`);
    }
    try {
      return { predicateType: item.predicateType, bundle: bundleFromJSON(item.bundle) };
    } catch (err) {
      throw new WardenError('PROVENANCE_INVALID', `attestation ${i} of ${label} (${item.predicateType}) is not a sigstore bundle (${err instanceof Error ? err.message : String(err)}); nothing was installed.`);
    }
  });
}

/** Whether the attestations name a SLSA provenance at all (a package published without one has none). */
export function hasProvenance(doc: unknown): boolean {
  const list = doc !== null && typeof doc === 'object' ? (doc as { attestations?: unknown }).attestations : undefined;
  return Array.isArray(list) && list.some((a) => SLSA_PROVENANCE.includes((a as { predicateType?: unknown } | null)?.predicateType as string));
}

/** Verifies one bundle's signature chain; refusals say whether a newer trust root would help. */
function verifyBundle(att: Attestation, root: TrustRoot, label: string, what: string): ReturnType<Verifier['verify']> {
  try {
    return new Verifier(root.material).verify(toSignedEntity(att.bundle));
  } catch (err) {
    if (!(err instanceof VerificationError)) throw new WardenError('PROVENANCE_INVALID', `the ${what} of ${label} could not be verified (${err instanceof Error ? err.message : String(err)}); nothing was installed.`);
    const stale = staleFor(att.bundle, root);
    if (stale) {
      throw new WardenError(
        'TRUST_ROOT_STALE',
        `the ${what} of ${label} was ${describeStaleness(stale, root)}. Update it with 'mcp-warden trust-root update' (or --from FILE offline), then try again; nothing was installed. If it still fails with the newest root, no sigstore key vouches for it: treat the package as forged.`,
      );
    }
    throw new WardenError('PROVENANCE_INVALID', `the ${what} of ${label} does not verify: ${err.code} (${err.message}). It was altered, or was not made by sigstore for this package; nothing was installed.`);
  }
}

/**
 * Verifies the registry's attestations for the tarball `subject` names; returns who built it. A package whose
 * attestations hold no SLSA provenance is refused with PROVENANCE_MISSING (the caller decides whether an
 * unsigned package may be admitted).
 */
export function verifyNpmAttestations(doc: unknown, subject: Subject, root: TrustRoot): VerifiedProvenance {
  const label = `${subject.name}@${subject.version}`;
  const atts = attestationsOf(doc, label);
  const provenance = atts.filter((a) => SLSA_PROVENANCE.includes(a.predicateType));
  const publish = atts.filter((a) => a.predicateType === NPM_PUBLISH);
  if (provenance.length === 0) throw new WardenError('PROVENANCE_MISSING', `${label} has no SLSA provenance among its attestations, so nothing says who built it.`);
  if (provenance.length > 1 || publish.length > 1) throw new WardenError('PROVENANCE_INVALID', `the registry sent ${provenance.length} provenance and ${publish.length} publish attestations for ${label} (one of each is expected); nothing was installed.`);
  if (publish.length === 0) throw new WardenError('PROVENANCE_INVALID', `${label} has a provenance but no npm publish attestation (the registry signs one for every package published with provenance); nothing was installed.`);
  const [prov, pub] = [provenance[0] as Attestation, publish[0] as Attestation];
  // The registry signs its publish attestation with its own key (keys.json, npm:attestations): a statement of that
  // type under a certificate is anyone's with a sigstore identity, not the registry's word.
  if (pub.bundle.verificationMaterial.content.$case !== 'publicKey') {
    throw new WardenError('PROVENANCE_INVALID', `the npm publish attestation of ${label} is signed with a certificate, not with the registry's attestation key: it is not the registry's word that it accepted this tarball. Nothing was installed.`);
  }

  const signer = verifyBundle(prov, root, label, 'provenance');
  checkSubject(prov.bundle, prov.predicateType, subject, label, 'provenance');
  verifyBundle(pub, root, label, 'npm publish attestation');
  checkSubject(pub.bundle, pub.predicateType, subject, label, 'npm publish attestation');

  const leaf = leafOf(prov.bundle);
  if (!leaf) throw new WardenError('PROVENANCE_INVALID', `the provenance of ${label} is signed with a bare key, not a certificate naming who built it; nothing was installed.`);
  const signedAt = signingTime(prov.bundle, leaf);
  return {
    identity: identityOf(leaf, signer.identity?.subjectAlternativeName, signer.identity?.extensions?.issuer, label),
    ...(signedAt ? { signedAt: signedAt.toISOString() } : {}),
    predicateType: prov.predicateType,
  };
}

/** The sha512 of a tarball as npm's `dist.integrity` spells it ("sha512-<base64>"), and in hex. */
export function sha512Of(bytes: Buffer): { integrity: string; hex: string } {
  const d = createHash('sha512').update(bytes).digest();
  return { integrity: `sha512-${d.toString('base64')}`, hex: d.toString('hex') };
}
