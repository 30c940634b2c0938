import type { ServerConfig } from '../store/servers.js';
import type { WardenLockEntry } from '../surface/warden-lock.js';
import { sandboxHash } from './schema.js';

// Whether a server's sandbox is the one pinned in warden.lock (`h_sandbox`). Unlike the rules (ADR 0022, 10),
// a sandbox that is not the pinned one refuses the launch: a hand edit could only widen what the server may
// reach or remove the sandbox, and the launch is where that would take effect.

export type SandboxPinState = 'none' | 'pinned' | 'changed' | 'added' | 'removed';

export interface SandboxPin {
  state: SandboxPinState;
  now?: string;
  pinned?: string;
}

/** The pin state of one server's sandbox against its warden.lock entry. */
export function sandboxPin(server: ServerConfig, extra: WardenLockEntry | undefined): SandboxPin {
  const now = server.sandbox !== undefined ? sandboxHash(server.sandbox) : undefined;
  const pinned = extra?.sandbox;
  const state: SandboxPinState = now === pinned ? (now ? 'pinned' : 'none') : !pinned ? 'added' : !now ? 'removed' : 'changed';
  return { state, ...(now ? { now } : {}), ...(pinned ? { pinned } : {}) };
}
