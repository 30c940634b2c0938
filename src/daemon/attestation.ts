import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DigestCache } from '../attest/cache.js';
import { matchAllowlist, refusalReason } from '../attest/match.js';
import { planLaunch, type TreeMemo } from '../attest/plan.js';
import type { WatchTarget } from './watcher.js';
import { WardenError } from '../error.js';
import { loadAllowlist, type AllowlistFile } from '../store/allowlist.js';
import { loadLocks } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, type ServersFile } from '../store/servers.js';

// What the daemon watches, and the attestation re-check a change of it triggers.

/** The watch key of the trust files themselves. */
export const CONFIG = '@config';

/** The last configuration that loaded: an invalid edit never replaces it. */
export interface Good {
  servers: ServersFile;
  allowlist: AllowlistFile;
  /** The servers whose surface tools.lock pins. */
  pinned: string[];
}

export function loadGood(paths: HomePaths): Good {
  const servers = loadServers(paths);
  const allowlist = loadAllowlist(paths);
  const locks = loadLocks(paths); // refused like the others when invalid
  return { servers, allowlist, pinned: Object.keys(servers.servers).filter((id) => locks.tools.has(id)) };
}

/** The trust files: a change reloads the configuration. */
export function configTargets(paths: HomePaths): WatchTarget[] {
  return [paths.servers, paths.allowlist, paths.toolsLock, paths.wardenLock].map((p) => ({ path: p, keys: [CONFIG] }));
}

export interface Attested {
  /** 'allowed', or the refusal's error code. */
  state: string;
  reason: string;
  /** The paths whose change could change what this server runs. */
  targets: WatchTarget[];
}

/** Re-attests one server against the allowlist, as `run` would before launching it. */
/** `cache` loads the server's digest cache; an invalid one (a WardenError) is that server's state, not the round's. */
export async function attestServer(good: Good, id: string, cache: () => DigestCache, memo: TreeMemo): Promise<Attested | undefined> {
  const s = Object.hasOwn(good.servers.servers, id) ? good.servers.servers[id] : undefined;
  if (!s) return undefined;
  const targets: WatchTarget[] = [];
  // A new file of the same name earlier in the trusted PATH would shadow a bare command.
  if (!s.command.includes('/')) for (const dir of good.servers.path.split(':')) targets.push({ path: path.join(dir, s.command), keys: [id] });
  else targets.push({ path: path.resolve(s.cwd ?? '/', s.command), keys: [id] });
  try {
    const plan = await planLaunch({ serverId: id, command: s.command, args: s.args, cwd: s.cwd, trustedPath: good.servers.path, modules: s.modules }, cache(), memo);
    for (const a of plan.artifacts) {
      if (a.kind !== 'package') for (const hop of [...a.chain, a.path]) targets.push({ path: hop, keys: [id] });
      for (const dir of a.treeDirs ?? []) targets.push({ path: dir, keys: [id], contents: true });
    }
    const r = refusalReason(matchAllowlist(plan.artifacts, good.allowlist.entries));
    return r ? { state: r.code, reason: r.text, targets } : { state: 'allowed', reason: '', targets };
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    return { state: err.code, reason: err.message, targets };
  }
}

export interface AttestRound {
  paths: HomePaths;
  good: Good;
  ids: string[];
}

export interface AttestRoundResult {
  results: Record<string, Attested | undefined>;
  hits: number;
  misses: number;
  cacheError?: string;
}

/** Re-attests `ids` in a worker thread (see attestation-worker.ts for why). */
export function attestInWorker(round: AttestRound): Promise<AttestRoundResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('../daemon/attestation-worker.js', import.meta.url), { workerData: round });
    let result: AttestRoundResult | undefined;
    worker.once('message', (m: AttestRoundResult) => (result = m));
    worker.once('error', reject);
    worker.once('exit', (code) => (result ? resolve(result) : reject(new Error(`the attestation worker exited with code ${code} and no result`))));
  });
}
