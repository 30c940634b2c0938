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

/** What a confined server's sandbox refused at run time: a connection its network proxy did not carry (a host
 *  or port no `network.domains` entry grants, or a granted name resolving to an address that is not public). The
 *  host and port as asked (at most 255 characters), never a byte of what would have been sent. */
export interface SandboxDeniedConnectEvent {
  event: 'sandbox_denied';
  server: string;
  kind: 'connect';
  host: string;
  port: number;
  reason: 'not_granted' | 'loopback_address' | 'private_address';
  /** The address that was not public (loopback_address, private_address). */
  address?: string;
}

/** A read of one of the decoys the warden placed at well-known secret paths of the hidden home
 *  (sandbox/decoys.ts): the path inside the sandbox (the user's home's), never contents (a decoy is empty). With
 *  reason `guard`, where no decoy is placed (a warden that is not root), a node server's module guard reported a
 *  read of one of those paths through node's fs (it found no such file): the path is the warden's own list's. */
export interface SandboxDeniedReadEvent {
  event: 'sandbox_denied';
  server: string;
  kind: 'read';
  path: string;
  reason: 'decoy' | 'guard';
}

/** A write-intent system call of a confined server that the kernel refused with EROFS, EACCES or EPERM, seen by
 *  bpftrace for a root warden (sandbox/write-trace.ts): the path as the server gave it (its own bytes from its
 *  memory, untrusted: relative to its working directory or a descriptor, at most 192 bytes), the call, the errno.
 *  With `source: "guard"`, a node server's own module guard reported it (a warden that is not root:
 *  launch/guard-denials.ts): the server's word, node's name of the call, the path at most 1024 characters. */
export interface SandboxDeniedWriteEvent {
  event: 'sandbox_denied';
  server: string;
  kind: 'write';
  path: string;
  call: string;
  errno: 'EROFS' | 'EACCES' | 'EPERM';
  /** The path was longer than 192 bytes (1024 characters from the guard), or could not be read whole. */
  truncated?: true;
  /** Reported by the server's module guard, not seen in the kernel (absent: bpftrace saw it). */
  source?: 'guard';
}

export type SandboxDeniedEvent = SandboxDeniedConnectEvent | SandboxDeniedReadEvent | SandboxDeniedWriteEvent;

/** The denied writes of a confined session are not observed: its tracer (bpftrace) could not start, or stopped
 *  while the server ran. Observation only: the session goes on, confined as before. `why` is bpftrace's own
 *  account (at most 512 characters). */
export interface SandboxWritesUnobservedEvent {
  event: 'sandbox_writes_unobserved';
  server: string;
  when: 'start' | 'session';
  why: string;
}

/** A name the hiding of a read.deny path leaves on the host's side (sandbox/deny-plan.ts: the top directory it
 *  rebuilds, when mounted on a name of the host's), or a directory above it, was replaced, created or removed on
 *  the host while a confined server ran, which moves the hiding, so `run` ended the session. The path is the
 *  operator's read.deny path or one of its ancestors (servers.json). */
export interface SandboxDenyReplacedEvent {
  event: 'sandbox_deny_replaced';
  server: string;
  path: string;
}

export type SandboxEvent = SandboxChangedEvent | SandboxDeniedConnectEvent | SandboxDeniedReadEvent | SandboxDeniedWriteEvent | SandboxDenyReplacedEvent | SandboxWritesUnobservedEvent;
