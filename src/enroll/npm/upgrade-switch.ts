import path from 'node:path';
import { WardenError } from '../../error.js';
import { loadAllowlist, upsertEntry, type AllowlistEntry } from '../../store/allowlist.js';
import { loadLocks } from '../../store/locks.js';
import type { HomePaths } from '../../store/paths.js';
import { entryText, loadServers, type ServerConfig } from '../../store/servers.js';
import { trustFileWrites } from '../../store/trust-writes.js';
import { commitFiles, withFileLocks } from '../../store/update.js';
import type { LockEntry } from '../../surface/lockfile.js';
import type { WardenLockEntry } from '../../surface/warden-lock.js';

// The one step that moves an installed server to its new version: servers.json, allowlist.json, tools.lock and
// warden.lock are locked together (store/update.ts, sorted order), read, changed and written as one step (store/journal.ts),
// while all four locks are held. Refused, with nothing written, when the server's entry is no longer the one the
// upgrade started from (another upgrade, an edit). The old version's allowlist entries (those inside its store
// entry) go, unless another server still runs from that store entry.

export interface Switch {
  server: ServerConfig;
  entries: AllowlistEntry[];
  lock: LockEntry;
  extra: WardenLockEntry | undefined;
}

export interface Switched {
  added: AllowlistEntry[];
  removed: AllowlistEntry[];
  replaced: { entry: AllowlistEntry; previous: AllowlistEntry }[];
}

const inside = (p: string, dir: string): boolean => p === dir || p.startsWith(dir + path.sep);

/** `from` is the server's entry as the upgrade read it: any change to it since (not only to its package) refuses
 *  the switch, which would otherwise write back the entry as it was then. */
export function switchServer(paths: HomePaths, id: string, from: ServerConfig, oldEntryDir: string, next: Switch): Promise<Switched> {
  const fromStore = from.package?.store;
  return withFileLocks([paths.servers, paths.allowlist, paths.toolsLock, paths.wardenLock], 'servers.json, allowlist.json and the locks', async (stillHeld) => {
    const servers = loadServers(paths);
    const current = Object.hasOwn(servers.servers, id) ? servers.servers[id] : undefined;
    if (current?.package?.store !== fromStore || entryText(current) !== entryText(from)) {
      throw new WardenError('SERVER_EXISTS', `server '${id}' in ${paths.servers} changed while the upgrade was being prepared (another upgrade or an edit); nothing was switched. Run the upgrade again.`);
    }
    servers.servers[id] = next.server;
    const shared = Object.entries(servers.servers).some(([other, s]) => other !== id && s.package?.store === fromStore);

    const allowlist = loadAllowlist(paths);
    const removed = shared ? [] : allowlist.entries.filter((e) => inside(e.path, oldEntryDir));
    allowlist.entries = allowlist.entries.filter((e) => !removed.includes(e));
    const added: AllowlistEntry[] = [];
    const replaced: Switched['replaced'] = [];
    for (const entry of next.entries) {
      const change = upsertEntry(allowlist, entry);
      if (change.action === 'add') added.push(entry);
      if (change.action === 'replace') replaced.push({ entry, previous: change.previous });
    }

    const locks = loadLocks(paths);
    locks.tools.set(id, next.lock);
    if (next.extra) locks.warden.set(id, next.extra);
    else locks.warden.delete(id);

    stillHeld();
    await commitFiles(trustFileWrites(paths, { servers, allowlist, locks }), `the upgrade of server '${id}'`);
    return { added, removed, replaced };
  });
}
