import { createHash } from 'node:crypto';
import type { AllowlistEntry, AllowlistFile } from '../store/allowlist.js';
import type { BundleState } from '../store/bundle/state.js';
import type { Locks } from '../store/locks.js';
import { entryText, type ServerConfig, type ServersFile } from '../store/servers.js';

// A server a trust bundle brought to this machine and a later bundle no longer names has been withdrawn from the
// reviewed setup (it may have been found hostile): apply removes it, so a fleet can revoke. Only servers the last
// applied bundle named, whose servers.json entry is still the one it wrote (bundle-state.json `applied.entries`),
// are the fleet's: a server this machine added itself, or one its operator edited, removed or added again, is
// never touched. Its tools.lock and warden.lock entries go with it. An allowlist entry goes when a bundle added it
// (noted `trust bundle serial N`), a server of the bundles ran it before this apply, and no server's warden.lock
// names it after (a withdrawn server's script, a path a server no longer runs).

const BY_BUNDLE = /^trust bundle serial \d+$/;

export interface Retired {
  servers: string[];
  allowlist: AllowlistEntry[];
}

const key = (a: { kind: string; path: string }): string => `${a.kind} ${a.path}`;

/** sha256 of a server's entry as an apply wrote it, its env values left out (this machine's, rotated at will). */
export function entryDigest(entry: ServerConfig): string {
  const { env: _env, ...rest } = entry;
  return createHash('sha256').update(entryText(rest)).digest('hex');
}

/** The servers the last applied bundle brought whose entry is still the one it wrote: the fleet's. */
export function fleetServers(state: BundleState, servers: ServersFile): string[] {
  const entries = state.applied?.entries ?? {};
  return Object.keys(entries).filter((id) => Object.hasOwn(servers.servers, id) && entryDigest(servers.servers[id] as ServerConfig) === entries[id]);
}

/** The artifacts the warden.lock entries of `ids` name, before an apply changes them. */
export function artifactsOf(locks: Locks, ids: Iterable<string>): Set<string> {
  return new Set([...ids].flatMap((id) => locks.warden.get(id)?.artifacts.map(key) ?? []));
}

/** After the bundle's entries were written into `servers` and `locks`: removes, in place, the servers `previous`
 *  (the ids the last applied bundle named) has and `next` does not, and the allowlist entries no longer used. */
export function retireWithdrawn(previous: readonly string[], next: readonly string[], usedBefore: ReadonlySet<string>, servers: ServersFile, locks: Locks, allowlist: AllowlistFile): Retired {
  const ids = previous.filter((id) => !next.includes(id)).sort();
  for (const id of ids) {
    delete servers.servers[id];
    locks.tools.delete(id);
    locks.warden.delete(id);
  }
  const usedAfter = artifactsOf(locks, locks.warden.keys());
  const dropped = allowlist.entries.filter((e) => e.note !== undefined && BY_BUNDLE.test(e.note) && usedBefore.has(key(e)) && !usedAfter.has(key(e)));
  allowlist.entries = allowlist.entries.filter((e) => !dropped.includes(e));
  return { servers: ids, allowlist: dropped };
}
