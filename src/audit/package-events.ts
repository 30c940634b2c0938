// Audit events of the sealed store: what was installed or upgraded, from which publisher, and every decision
// that admitted less than verified provenance. Identities are URLs and refs of the signing CI run, never
// package descriptions or other publisher-written text.

export interface PublisherRecord {
  issuer: string;
  repository: string;
  workflow: string;
  ref?: string;
  commit?: string;
}

export interface PackageInstalledEvent {
  event: 'package_installed';
  server: string;
  package: string;
  version: string;
  integrity: string;
  store: string;
  /** The verified publisher, or "unsigned" (see unsigned_admitted). */
  provenance: PublisherRecord | 'unsigned';
  dependencies: number;
  dependenciesWithProvenance: number;
  by: string;
}

/** A package without provenance admitted on the operator's word (--allow-unsigned or a prompt), or as an upgrade
 *  of a server that was admitted unsigned before (its policy is "preferred"). */
export interface UnsignedAdmittedEvent {
  event: 'unsigned_admitted';
  server: string;
  package: string;
  version: string;
  integrity: string;
  how: '--allow-unsigned' | 'prompt' | 'policy-preferred';
  by: string;
}

export interface PackageUpgradedEvent {
  event: 'package_upgraded';
  server: string;
  package: string;
  from: { version: string; integrity: string; store: string };
  to: { version: string; integrity: string; store: string };
  provenance: PublisherRecord | 'unsigned';
  by: string;
}

/** An upgrade admitted although its publisher differs from the pinned one, or it lost its provenance. */
export interface TrustOverrideEvent {
  event: 'provenance_override';
  server: string;
  package: string;
  version: string;
  reason: 'publisher_changed' | 'provenance_lost';
  pinned?: PublisherRecord;
  presented?: PublisherRecord;
  by: string;
}
