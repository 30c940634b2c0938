// Audit events of signed trust bundles (the daemon's `fleet` source and `bundle apply`). Serials and short
// reason codes only: never the bundle's contents.

/** A bundle was verified and applied; `serial` is its serial, now the last applied one. */
export interface BundleAppliedEvent {
  event: 'bundle_applied';
  serial: number;
}

/** A bundle was refused (a bad signature, a serial not above the last applied one…); nothing was applied. */
export interface BundleRejectedEvent {
  event: 'bundle_rejected';
  /** A short code saying why, used as a metric label: keep it to a small fixed set. */
  reason: string;
}

export type BundleEvent = BundleAppliedEvent | BundleRejectedEvent;
