import { rulesHash } from '../rules/schema.js';
import { loadLocks } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, type ServerConfig } from '../store/servers.js';
import { withFileLocks } from '../store/update.js';
import type { WardenLockEntry } from '../surface/warden-lock.js';

// Whether a server's rules are the ones pinned in warden.lock (`h_rules`), for `rules`, `diff` and the daemon.
// The rules are pinned like the surface: a change made by hand in servers.json is drift until the operator pins
// it (`rules <id> --pin`), and every change made through `rules` is pinned with it.

/** none: no rules, none pinned; pinned: the rules are the pinned ones; changed: other rules than the pinned
 *  ones; added: rules, none pinned; removed: no rules, some pinned. */
export type RulesPinState = 'none' | 'pinned' | 'changed' | 'added' | 'removed';

export interface RulesPin {
  state: RulesPinState;
  /** rulesHash() of the server's rules now (absent: it has none). */
  now?: string;
  /** The hash warden.lock pinned (absent: none). */
  pinned?: string;
}

/** The pin state of one server's rules against its warden.lock entry. */
export function rulesPin(server: ServerConfig, extra: WardenLockEntry | undefined): RulesPin {
  const now = server.rules ? rulesHash(server.rules) : undefined;
  const pinned = extra?.rules;
  const state: RulesPinState = now === pinned ? (now ? 'pinned' : 'none') : !pinned ? 'added' : !now ? 'removed' : 'changed';
  return { state, ...(now ? { now } : {}), ...(pinned ? { pinned } : {}) };
}

/** True when the rules are not the pinned ones (drift for `diff`, an alert for the daemon). */
export function rulesDrifted(pin: RulesPin): boolean {
  return pin.state !== 'none' && pin.state !== 'pinned';
}

/**
 * The pin state of every locked server's rules, read under the locks of servers.json, tools.lock and warden.lock:
 * `rules` writes both files while it holds servers.json's lock, so a reader here never sees one half of an edit
 * made through the CLI (which would look like a change made outside it). Servers without a warden.lock entry
 * (not locked yet: nothing can be pinned) are left out.
 */
export function readRulesPins(paths: HomePaths): Promise<Map<string, RulesPin>> {
  return withFileLocks([paths.servers, paths.toolsLock, paths.wardenLock], 'servers.json, tools.lock and warden.lock', () => {
    const servers = loadServers(paths);
    const locks = loadLocks(paths);
    const pins = new Map<string, RulesPin>();
    for (const [id, server] of Object.entries(servers.servers)) {
      const extra = locks.warden.get(id);
      if (extra) pins.set(id, rulesPin(server, extra));
    }
    return pins;
  });
}
