import { matchAllowlist, type ArtifactVerdict } from '../attest/match.js';
import { planLaunch } from '../attest/plan.js';
import { WardenError } from '../error.js';
import { loadAllowlist } from '../store/allowlist.js';
import { loadDigestCache, saveDigestCache } from '../store/digest-cache-file.js';
import { openHome } from '../store/home.js';
import { resolveHome } from '../store/paths.js';
import { loadServers, serverById } from '../store/servers.js';
import { loadLocks } from '../store/locks.js';
import { recentEvents } from '../audit/tail.js';
import { fetchDaemonStatus } from '../daemon/status-client.js';
import type { DaemonStatus } from '../daemon/daemon.js';
import { escaped, line, printJson } from './output.js';
import { printDetail, printOverview, type PackageView } from './status-view.js';
import { sandboxStatus, sandboxView } from '../sandbox/view.js';
import { entryDir, readInstallRecord } from '../store/package-store.js';
import type { HomePaths } from '../store/paths.js';
import type { ServerConfig } from '../store/servers.js';
import { packageChangeText } from '../supervise/tree-change.js';

/** What the sealed store says about an installed server: version, entry, provenance, dependencies. */
function packageView(paths: HomePaths, s: ServerConfig): PackageView | undefined {
  const pkg = s.package;
  if (!pkg) return undefined;
  const dir = entryDir(paths, pkg.store);
  const base = { name: pkg.name, version: pkg.version, integrity: pkg.integrity, store: dir, policy: s.provenance ?? 'off', pinned: s.identity ?? null };
  try {
    const record = readInstallRecord(dir);
    if (!record) return { ...base, error: `the store entry ${dir} is missing or incomplete; install the package again` };
    const deps = record.dependencies;
    return {
      ...base,
      provenance: 'identity' in record.provenance ? { ...record.provenance.identity, ...(record.provenance.signedAt ? { signedAt: record.provenance.signedAt } : {}) } : null,
      unsignedAdmittedBy: 'unsigned' in record.provenance ? record.provenance.admittedBy : null,
      verifiedAt: record.verifiedAt,
      dependencies: { total: deps.length, withProvenance: deps.filter((d) => d.provenance).length },
    };
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    return { ...base, error: `${err.code}: ${err.message}` };
  }
}

function verdictText(v: ArtifactVerdict): string {
  switch (v.state) {
    case 'allowed':
      return 'allowlisted';
    case 'not_allowlisted':
      return 'NOT ALLOWLISTED';
    case 'digest_mismatch':
      return `CHANGED (allowlisted sha256 ${v.expected})`;
    case 'digest_at_other_path':
      return `NOT ALLOWLISTED HERE (digest allowlisted for ${v.allowedPath})`;
  }
}

/** The trust view: per server its command, what it resolves to, digests, and whether each is allowlisted;
 *  with what a running daemon last saw (its attestation watch and scheduled verification) when one runs. */
export async function statusVerb(homeFlag: string | undefined, id: string | undefined, json: boolean): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const config = loadServers(paths);
  const ids = id ? [id] : Object.keys(config.servers).sort();
  if (id) serverById(config, id, paths);
  const allowlist = loadAllowlist(paths);
  const locks = loadLocks(paths);
  const history = recentEvents(paths.audit);
  const trustOf = (sid: string) => {
    const entry = locks.tools.get(sid);
    // The last judgement of a live surface (a session or the daemon), not the act of locking it.
    const surface = history.filter((e) => e.event === 'surface' && e.server === sid && e.source !== 'lock' && e.source !== 'pin').pop();
    const canaries = history.filter((e) => e.event === 'canary' && e.server === sid);
    const lastCanaryTs = canaries.at(-1)?.ts;
    const lastRound = canaries.filter((e) => e.ts === lastCanaryTs || (typeof e.ts === 'string' && typeof lastCanaryTs === 'string' && Date.parse(lastCanaryTs) - Date.parse(e.ts) < 60_000));
    return {
      lock: entry ? { tools: entry.tools.length, revision: entry.protocol.era, surfaceHash: entry.surface_hash, canaryBaselines: Object.keys(locks.warden.get(sid)?.canaries ?? {}).length, conditionalTools: locks.warden.get(sid)?.conditional.length ?? 0 } : null,
      pinState: surface ? { state: surface.pinState, source: surface.source, at: surface.ts } : null,
      lastCanary: lastCanaryTs ? { result: lastRound.every((e) => e.result === 'pass') ? 'pass' : 'fail', at: lastCanaryTs, probes: lastRound.map((e) => ({ probe: e.probe, result: e.result, medianMs: e.medianMs })) } : null,
    };
  };
  const live = (await fetchDaemonStatus(paths.statusSocket)) as DaemonStatus | undefined;
  const daemon = live ? { running: true, pid: live.pid, startedAt: live.startedAt, metrics: live.metrics } : { running: false };
  let allOk = true;
  const servers = [];
  for (const sid of ids) servers.push(await describeServer(sid));
  async function describeServer(sid: string) {
    const s = config.servers[sid] as NonNullable<(typeof config.servers)[string]>;
    const watched = live?.servers?.[sid];
    const pkg = packageView(paths, s);
    const sandbox = sandboxStatus(sandboxView(paths, sid), history);
    allOk &&= sandbox.launchable;
    const base = { id: sid, command: s.command, args: s.args, posture: s.posture, sandbox, ...(pkg ? { package: pkg } : {}), ...trustOf(sid), ...(live ? { daemon: { attestation: watched?.attestation ?? null, lastVerification: watched?.lastVerification ?? null } } : {}) };
    try {
      const cache = loadDigestCache(paths, sid);
      let plan: Awaited<ReturnType<typeof planLaunch>>;
      try {
        plan = await planLaunch({ serverId: sid, command: s.command, args: s.args, cwd: s.cwd, trustedPath: config.path, modules: s.modules }, cache);
      } finally {
        saveDigestCache(paths, sid, cache); // what was digested stays digested, whatever the verdict
      }
      const att = matchAllowlist(plan.artifacts, allowlist.entries);
      allOk &&= att.allowed;
      return {
        ...base,
        resolvedPath: plan.file,
        allowed: att.allowed,
        artifacts: att.verdicts.map((v) => {
          const changes = v.state === 'digest_mismatch' ? packageChangeText(paths, v.artifact, v.expected) : '';
          return { kind: v.artifact.kind, path: v.artifact.path, sha256: v.artifact.sha256, chain: v.artifact.chain, state: v.state, note: verdictText(v), ...(changes ? { changes } : {}) };
        }),
      };
    } catch (err) {
      if (!(err instanceof WardenError)) throw err;
      allOk = false;
      return { ...base, allowed: false, error: { code: err.code, message: err.message } };
    }
  }
  if (json) {
    printJson({ home: paths.home, daemon, servers });
    return allOk ? 0 : 1;
  }
  line(live ? escaped(`daemon    running (pid ${live.pid}, since ${live.startedAt}), metrics at ${live.metrics}`) : `daemon    not running (this view is read from the files in ${paths.home})`);
  if (servers.length === 0) line(`No servers in ${paths.servers}. Add one with: mcp-warden add <id> -- <command> [args...], or import a client's configuration with: mcp-warden import <file>`);
  else if (id) for (const s of servers) printDetail(s);
  else printOverview(servers);
  return allOk ? 0 : 1;
}
