import path from 'node:path';
import { DigestCache } from '../attest/cache.js';
import { matchAllowlist, refusalReason } from '../attest/match.js';
import { planLaunch } from '../attest/plan.js';
import { ParentDirWatcher, type WatchTarget } from '../daemon/watcher.js';
import { WardenError } from '../error.js';
import { loadAllowlist, type AllowlistFile } from '../store/allowlist.js';
import { loadDigestCache, saveDigestCache } from '../store/digest-cache-file.js';
import { openHome } from '../store/home.js';
import { loadLocks } from '../store/locks.js';
import { resolveHome, type HomePaths } from '../store/paths.js';
import { loadServers, type ServersFile } from '../store/servers.js';
import { listenForEvents } from '../daemon/event-socket.js';
import { serveHttp } from '../daemon/http.js';
import { WardenMetrics } from '../daemon/metrics.js';
import { sweepAndAudit } from './common.js';
import { checkCanaries } from './canary.js';
import { daemonSocket, recorder, type Recorder } from './recorder.js';
import { check } from './verify.js';

// `mcp-warden daemon`: the long-running side. This first part watches the trust files and every allowlisted
// file a server runs, with each symlink hop and each trusted-PATH directory that could shadow a bare command
// name: a change re-attests the servers that depend on it, and an artifact that no longer matches is a
// `binary_changed` alert before anyone launches it. An invalid edit of a trust file is refused with an alert
// and the last good configuration stays in force. SIGHUP reloads; SIGTERM and SIGINT stop cleanly.

const say = (m: string): void => void process.stderr.write(`mcp-warden daemon: ${m}\n`);
const CONFIG = '@config';

interface Good {
  servers: ServersFile;
  allowlist: AllowlistFile;
}

function load(paths: HomePaths): Good {
  const servers = loadServers(paths);
  const allowlist = loadAllowlist(paths);
  loadLocks(paths); // refused like the others when invalid
  return { servers, allowlist };
}

/** The paths whose change could change what a server runs. */
async function targetsOf(paths: HomePaths, good: Good, cache: DigestCache): Promise<WatchTarget[]> {
  const targets: WatchTarget[] = [paths.servers, paths.allowlist, paths.toolsLock, paths.wardenLock].map((p) => ({ path: p, keys: [CONFIG] }));
  const trusted = good.servers.path.split(':');
  for (const [id, s] of Object.entries(good.servers.servers)) {
    // A new file of the same name earlier in the trusted PATH would shadow a bare command.
    if (!s.command.includes('/')) for (const dir of trusted) targets.push({ path: path.join(dir, s.command), keys: [id] });
    try {
      const plan = await planLaunch({ serverId: id, command: s.command, args: s.args, cwd: s.cwd, trustedPath: good.servers.path }, cache);
      for (const a of plan.artifacts) {
        if (a.kind === 'package') continue; // package trees are re-digested on change of their entry script and on schedule
        for (const hop of [...a.chain, a.path]) targets.push({ path: hop, keys: [id] });
      }
    } catch {
      // Unresolvable now: the re-check on any change of its command path will say so.
    }
  }
  return targets;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Parses --listen HOST:PORT, refusing anything but a loopback address. */
function parseListen(listen: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(listen);
  const host = m?.[1] ?? '';
  const port = Number(m?.[2]);
  if (!m || !LOOPBACK.test(host) || port > 65535) {
    throw new WardenError('USAGE', `--listen ${listen}: expected a loopback HOST:PORT such as 127.0.0.1:9464 (metrics and status are never served beyond this machine).`);
  }
  return { host, port };
}

export async function daemonVerb(homeFlag: string | undefined, listen: string): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, true);
  const { host, port } = parseListen(listen);
  let good = load(paths);
  const metrics = new WardenMetrics();
  const serverStates = new Map<string, { state: string; since: string }>();
  const base = recorder(paths, good.servers.alerts, say, false);
  const rec: Recorder = {
    record: (e) => {
      base.record(e);
      metrics.observe(e as unknown as Record<string, unknown>);
    },
    flush: () => base.flush(),
  };
  // One sweep at a time; a request that arrives during a sweep (which may have read run/ too early) gets
  // one more sweep after it.
  let sweeping = false;
  let again = false;
  const sweep = (): void => {
    if (sweeping) {
      again = true;
      return;
    }
    sweeping = true;
    void sweepAndAudit(paths, say)
      .catch((err: Error) => say(`orphan sweep failed: ${err.message}`))
      .finally(() => {
        sweeping = false;
        if (again) {
          again = false;
          sweep();
        }
      });
  };
  // A `run` whose connection closes may have died (SIGKILL, OOM): its group is swept at once.
  const events = await listenForEvents(daemonSocket(paths), (e) => metrics.observe(e), sweep);
  const started = new Date().toISOString();
  await sweepAndAudit(paths, say);
  const cache = loadDigestCache(paths);
  const lastState = new Map<string, string>();

  const recheck = async (id: string): Promise<void> => {
    const s = good.servers.servers[id];
    if (!s) return;
    let state = 'allowed';
    let reason = '';
    try {
      const plan = await planLaunch({ serverId: id, command: s.command, args: s.args, cwd: s.cwd, trustedPath: good.servers.path }, cache);
      const r = refusalReason(matchAllowlist(plan.artifacts, good.allowlist.entries));
      if (r) [state, reason] = [r.code, r.text];
    } catch (err) {
      if (!(err instanceof WardenError)) throw err;
      [state, reason] = [err.code, err.message];
    }
    const key = `${state}|${reason}`;
    if (lastState.get(id) === key) return;
    lastState.set(id, key);
    serverStates.set(id, { state, since: new Date().toISOString() });
    if (state === 'allowed') return;
    say(`server '${id}' would now be refused: ${reason}`);
    rec.record({ event: 'binary_changed', server: id, code: state, reason });
  };

  const watcher = new ParentDirWatcher((key) => {
    if (key === CONFIG) void reload('a trust file changed');
    else void recheck(key);
  });

  const reload = async (why: string): Promise<void> => {
    try {
      good = load(paths);
    } catch (err) {
      if (!(err instanceof WardenError)) throw err;
      say(`refused the new configuration (${why}): ${err.message} The last good configuration stays in force.`);
      rec.record({ event: 'config_invalid', code: err.code, reason: err.message });
      return;
    }
    await watcher.set(await targetsOf(paths, good, cache));
    for (const id of Object.keys(good.servers.servers)) await recheck(id);
    saveDigestCache(paths, cache);
    schedule();
  };
  let schedule = (): void => {};

  const targets = await targetsOf(paths, good, cache);
  await watcher.set(targets);
  for (const id of Object.keys(good.servers.servers)) await recheck(id);
  saveDigestCache(paths, cache);
  const watched = new Set(targets.map((t) => t.path)).size;
  const status = (): unknown => {
    metrics.cacheHits.set(cache.hits);
    metrics.cacheMisses.set(cache.misses);
    return { home: paths.home, pid: process.pid, startedAt: started, watchedPaths: watched, servers: Object.fromEntries([...serverStates]) };
  };
  const web = await serveHttp(host, port, metrics, status);
  say(`metrics at ${web.url}/metrics, status at ${web.url}/status, events on ${daemonSocket(paths)}`);
  say(`watching ${watched} paths for ${Object.keys(good.servers.servers).length} server(s) in ${paths.home}`);

  // Scheduled out-of-band verification: re-attest, fresh launch, surface verify, canaries.
  const busy = new Set<string>();
  const verifyNow = async (id: string): Promise<void> => {
    if (busy.has(id) || !good.servers.servers[id]) return;
    busy.add(id);
    try {
      const o = await check(paths, id);
      if (o.error) {
        say(`scheduled verification of '${id}' failed: ${o.error.message}`);
        rec.record({ event: 'verify_failed', server: id, code: o.error.code, reason: o.error.message });
        return;
      }
      const changed = (o.diff?.tools ?? []).filter((t) => t.state !== 'matched').map((t) => ({ name: t.name, state: t.state as 'changed' | 'added' | 'removed', classes: t.classes, fields: t.fields }));
      rec.record({ event: 'surface', server: id, source: 'verify', pinState: o.status === 'drift' ? 'changed' : 'matched', surfaceHash: o.liveSurfaceHash ?? '', ...(o.entry ? { lockedSurfaceHash: o.entry.surface_hash, lockedRevision: o.entry.protocol.era } : {}), revision: o.diff?.era?.live ?? o.entry?.protocol.era ?? '', changed });
      if (o.status === 'drift') say(`scheduled verification of '${id}': DRIFT (${o.worst}). Review with: mcp-warden diff ${id}`);
      if (loadLocks(paths).warden.get(id)?.canaries) await checkCanaries(paths, id, rec, 'schedule');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      say(`scheduled verification of '${id}' failed: ${message}`);
      rec.record({ event: 'verify_failed', server: id, code: err instanceof WardenError ? err.code : 'INTERNAL', reason: message });
    } finally {
      busy.delete(id);
    }
  };
  const timers: NodeJS.Timeout[] = [];
  schedule = (): void => {
    for (const t of timers.splice(0)) clearInterval(t);
    for (const [id, s] of Object.entries(good.servers.servers)) if (s.verifyEvery > 0) timers.push(setInterval(() => void verifyNow(id), s.verifyEvery * 1000));
    timers.push(setInterval(sweep, 60_000));
  };
  schedule();

  process.on('SIGHUP', () => void reload('SIGHUP'));
  await new Promise<void>((resolve) => {
    for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => resolve());
  });
  for (const t of timers) clearInterval(t);
  await watcher.close();
  web.server.close();
  events.close();
  await rec.flush();
  say('stopped');
  return 0;
}
