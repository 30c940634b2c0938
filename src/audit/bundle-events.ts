// Audit events of trust bundles (docs/bundles.md): a bundle applied to this home, or refused. Names and fields
// are a contract (the daemon's metrics count them: `serial` is the bundle's serial number, `reason` a stable
// refusal code and a metric label, so a small fixed set). Never the bundle's content beyond ids, paths and
// digests.

/** A bundle was verified and applied; `serial` is now the last applied one. */
export interface BundleAppliedEvent {
  event: 'bundle_applied';
  serial: number;
  /** sha256 of the bundle file's bytes, as signed. */
  sha256: string;
  servers: string[];
  /** Servers the previous bundle named and this one does not, removed from this machine. */
  removed?: string[];
  /** Running sessions of removed servers that were asked to end: the server and its `run`'s pid. */
  endedSessions?: { server: string; pid: number }[];
  /** The serial applied before this one, if any. */
  previousSerial?: number;
  /** True when the serial was not above the previous one and --allow-rollback admitted it. */
  rollback: boolean;
  /** The machine pins another signer than for its last bundle, so the serial started over. */
  signerChanged?: boolean;
  /** Who signed it: "key <hint>" or the certificate's SAN and issuer. */
  signer: string;
  by: string;
}

/** A bundle was refused (a bad signature, a serial not above the last applied one…); nothing was applied. */
export interface BundleRejectedEvent {
  event: 'bundle_rejected';
  /** The refusal's stable code (BUNDLE_ROLLBACK, BUNDLE_SIGNATURE_INVALID, BUNDLE_DIGEST_MISMATCH...). */
  reason: string;
  /** The bundle's serial when it could be read. */
  serial?: number;
  file: string;
  by: string;
}

export type BundleEvent = BundleAppliedEvent | BundleRejectedEvent;
