// Audit events of a server's sandbox (docs/guide.md "Confining a server"): hashes and levels, never paths'
// contents.

/** A server's sandbox changed through the CLI (`sandbox`), or an explicit choice to run it unconfined. */
export interface SandboxChangedEvent {
  event: 'sandbox_changed';
  server: string;
  via: 'cli';
  /** The pinned hash before, and the sandbox's hash now (absent: none). */
  from?: string;
  to?: string;
  /** confined, unconfined (the explicit choice) or none. */
  state: 'confined' | 'unconfined' | 'none';
}

export type SandboxEvent = SandboxChangedEvent;
