import { WardenError } from '../error.js';
import type { DigestCache } from '../attest/cache.js';
import { planLaunch } from '../attest/plan.js';
import type { AllowlistFile } from '../store/allowlist.js';
import type { TrustBundle } from '../store/bundle/format.js';
import type { Locks } from '../store/locks.js';
import type { ServersFile } from '../store/servers.js';
import type { Reproduced } from './reproduce.js';

// A trust bundle is trusted for the servers it names and for nothing else on the machine (docs/adr/0041). The
// servers it does not name (this machine's own, minus those the apply retires) keep the digests this machine's
// operator allowlisted for every path they run: a bundle whose server shares a file with one of them (the same
// node, the same script) may carry that file only with the digest the allowlist already holds for it.

/** The servers of `servers` that stay after the apply and that the bundle does not name: neither named nor the
 *  fleet's (`fleet`: the servers the last apply brought, which this one replaces or retires). */
export function unnamedServers(b: TrustBundle, servers: ServersFile, fleet: readonly string[]): string[] {
  return Object.keys(servers.servers).filter((id) => !Object.hasOwn(b.servers, id) && !fleet.includes(id)).sort();
}

/**
 * Every path each of `ids` runs: what its warden.lock entry recorded, and what its command resolves to here as
 * `run` would resolve it (when it resolves: a server whose launch is refused now still keeps its recorded paths).
 * Path -> the ids that run it.
 */
export async function pathsRunBy(ids: readonly string[], servers: ServersFile, locks: Locks, cache: DigestCache): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const add = (p: string, id: string): void => {
    const ids = out.get(p) ?? [];
    if (!ids.includes(id)) out.set(p, [...ids, id]);
  };
  for (const id of ids) {
    for (const a of locks.warden.get(id)?.artifacts ?? []) add(a.path, id);
    const s = servers.servers[id];
    if (!s) continue;
    try {
      const plan = await planLaunch({ serverId: id, command: s.command, args: s.args, cwd: s.cwd, trustedPath: servers.path, ...(s.modules ? { modules: s.modules } : {}) }, cache);
      for (const a of plan.artifacts) add(a.path, id);
    } catch {
      // Its launch is refused here now (or cannot be read: run fails the same way): its recorded paths stand.
    }
  }
  return out;
}

export const quoted = (ids: readonly string[]): string => ids.map((id) => `'${id}'`).join(', ');

/** Refuses the pinned artifacts whose digest here is not the one this machine's allowlist holds for their path,
 *  when a server the bundle does not name runs that path; names every one of them. */
export function checkShared(reproduced: readonly Reproduced[], allowlist: AllowlistFile, runBy: ReadonlyMap<string, string[]>, file: string): void {
  const shared: { kind: string; path: string; sha256: string; held: string | undefined; others: string[] }[] = [];
  for (const { artifact: a, sha256 } of reproduced) {
    if (!('accept' in a)) continue; // left to this machine's allowlist: nothing changes
    const others = runBy.get(a.path);
    if (!others) continue;
    const held = allowlist.entries.find((e) => e.path === a.path && e.kind === a.kind)?.sha256;
    if (held !== sha256) shared.push({ kind: a.kind, path: a.path, sha256, held, others });
  }
  if (shared.length === 0) return;
  const servers = [...new Set(shared.flatMap((x) => x.others))].sort();
  const them = servers.length > 1 ? 'them' : 'it';
  const what = shared.map((x) => `the ${x.kind} ${x.path} (run by ${quoted(x.others)}; sha256 ${x.sha256} here, the allowlist ${x.held ? `holds ${x.held}` : 'has no entry'})`);
  throw new WardenError(
    'BUNDLE_ARTIFACT_SHARED',
    `the trust bundle ${file} would allowlist new digests for ${what.join(', ')}, which server${servers.length > 1 ? 's' : ''} ${quoted(servers)} of this machine run${servers.length > 1 ? '' : 's'} and the bundle does not name; a bundle does not change what a server it does not name runs, so nothing was changed. If ${quoted(servers)} should run ${shared.length > 1 ? 'these files' : 'this file'} too, check ${shared.length > 1 ? 'them' : 'it'} and run: ${shared.map((x) => `mcp-warden allowlist add ${x.path}`).join('; ')}, then apply again; or hand ${them} over to the fleet in a bundle that names ${them} (--adopt).`,
  );
}
