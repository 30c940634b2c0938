import type { Bundle } from '@sigstore/bundle';
import { X509Certificate } from '@sigstore/core';
import { windowsClosed, type Authority, type TrustRoot } from './trust-root.js';

// Whether a sigstore bundle that failed to verify would need a newer trust root (TRUST_ROOT_STALE), rather than
// being bad (docs/adr/0017-offline-provenance.md, "Staleness is named, not guessed"): it names a log, CA or npm key
// the root does not hold and was signed after the root's date, or every authority of a kind it needs has a window
// that is closed at its signing time. Shared by npm provenance and keyless trust bundles, so both say the same.

/** The signing certificate of a bundle (the first of a chain), if it has one. */
export function leafOf(bundle: Bundle): X509Certificate | undefined {
  const c = bundle.verificationMaterial.content;
  const raw = c.$case === 'x509CertificateChain' ? c.x509CertificateChain.certificates[0]?.rawBytes : c.$case === 'certificate' ? c.certificate.rawBytes : undefined;
  return raw ? X509Certificate.parse(Buffer.from(raw)) : undefined;
}

/** When the bundle was signed: its latest transparency-log time, else its certificate's start. */
export function signingTime(bundle: Bundle, leaf: X509Certificate | undefined): Date | undefined {
  const times = bundle.verificationMaterial.tlogEntries.map((e) => Number(e.integratedTime)).filter((t) => Number.isFinite(t) && t > 0);
  if (times.length > 0) return new Date(Math.max(...times) * 1000);
  return leaf?.notBefore;
}

/** The kinds of key the bundle names that the trust root does not hold (a newer root would). */
export function unknownKeys(bundle: Bundle, leaf: X509Certificate | undefined, root: TrustRoot): Authority['kind'][] {
  const out: Authority['kind'][] = [];
  const logIds = root.material.tlogs.map((t) => t.logID.toString('hex'));
  if (bundle.verificationMaterial.tlogEntries.some((e) => !e.logId || !logIds.includes(Buffer.from(e.logId.keyId).toString('hex')))) out.push('transparency log');
  if (leaf && !root.material.certificateAuthorities.some((ca) => ca.certChain.some((c) => c.subject.equals(leaf.issuer)))) out.push('certificate authority');
  const c = bundle.verificationMaterial.content;
  if (c.$case === 'publicKey' && !root.data.npmKeys.keys.some((k) => k.keyId === c.publicKey.hint && k.keyUsage === 'npm:attestations')) out.push('npm attestation key');
  return out;
}

/** Why a bundle that did not verify needs a newer root: when it was signed and which kinds of key are unknown. */
export interface Staleness {
  signedAt: Date | undefined;
  unknown: Authority['kind'][];
}

/** The staleness of the root for a bundle that failed verification, or undefined when a newer root would not help. */
export function staleFor(bundle: Bundle, root: TrustRoot): Staleness | undefined {
  let leaf: X509Certificate | undefined;
  try {
    leaf = leafOf(bundle);
  } catch {
    return undefined; // a certificate that does not parse is bad whatever the root
  }
  const signedAt = signingTime(bundle, leaf);
  const unknown = unknownKeys(bundle, leaf, root);
  const needs: Authority['kind'][] = leaf ? ['certificate authority', 'transparency log', 'CT log'] : ['npm attestation key', 'transparency log'];
  if ((unknown.length > 0 && signedAt && signedAt > new Date(root.data.date)) || windowsClosed(root, signedAt, needs)) return { signedAt, unknown };
  return undefined;
}

/** "signed <time>, with a <kinds> key the sigstore trust root in use (<origin>, dated <date>) does not vouch for at that time" */
export function describeStaleness(s: Staleness, root: TrustRoot): string {
  return `signed ${s.signedAt?.toISOString() ?? 'at an unknown time'}, with ${s.unknown.length > 0 ? `a ${s.unknown.join(' and ')} key` : 'keys'} the sigstore trust root in use (${root.origin}, dated ${root.data.date}) does not vouch for at that time`;
}
