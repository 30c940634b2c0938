import fs from 'node:fs';
import { listenForEvents } from './event-socket.js';
import { serveHttp } from './http.js';
import { WardenMetrics } from './metrics.js';
import type { Notifier } from './notify.js';
import { Progress } from './progress.js';
import { Sweeper } from './sweeper.js';
import { ParentDirWatcher, type WatchTarget } from './watcher.js';
import { WardenError } from '../error.js';
import type { HomePaths } from '../store/paths.js';
import { startTimeOf } from '../launch/proc.js';
import { sweepAndAudit } from '../supervise/orphan-sweep.js';
import { attestInWorker, CONFIG, configTargets, loadGood, type Attested, type Good } from './attestation.js';
import { scheduledVerifier, type VerificationResult } from './schedule.js';
import { recorder, type Recorder } from '../supervise/recorder.js';
import { scanLocked } from '../supervise/surface-scan.js';
import { RulesWatch } from './rules-watch.js';
import { settlePendingCommit } from '../store/update.js';
import { FleetSource } from './fleet.js';
import { escaped } from '../escape.js';

// The daemon's runtime, the long-running side. It watches the trust files and every allowlisted file a server
// runs (each symlink hop, each trusted-PATH directory that could shadow a bare command name, each directory of
// a package tree): a change re-attests the servers that depend on it, and an artifact that no longer matches is
// a `binary_changed` alert before anyone launches it. An invalid edit of a trust file is refused with an alert
// and the last good configuration stays in force. It runs scheduled verifications, sweeps orphans, serves
// /metrics and /status on loopback, and speaks sd_notify (READY, RELOADING, STOPPING, and WATCHDOG only while
// its loops make progress). With a fleet source it fetches signed trust bundles and applies them (fleet.ts).
// SIGHUP reloads and fetches from the fleet source; SIGTERM and SIGINT stop cleanly.

/** What /status answers (and `mcp-warden status` shows when the daemon runs). */
export interface DaemonStatus {
  home: string;
  pid: number;
  startedAt: string;
  metrics: string;
  watchedDirectories: number;
  servers: Record<string, { attestation: { state: string; since: string } | null; lastVerification: VerificationResult | null }>;
}

const say = (m: string): void => void process.stderr.write(`mcp-warden daemon: ${escaped(m)}\n`);
const MAX_RELOAD_MS = 2 * 60_000;
const MAX_ROUND_MS = 5 * 60_000;

/** Sends WATCHDOG=1 every half interval while nothing is stalled; says once when it starts withholding. */
function runWatchdog(notify: Notifier, progress: Progress): NodeJS.Timeout | undefined {
  if (!notify.watchdogMs) return undefined;
  let withheld = '';
  return setInterval(
    () => {
      const stalled = progress.stalled().join('; ');
      if (!stalled) notify.send('WATCHDOG=1');
      else if (stalled !== withheld) {
        say(`withholding the watchdog ping, systemd will restart the daemon: ${stalled}`);
        notify.send(`STATUS=stalled: ${stalled}`);
      }
      withheld = stalled;
    },
    Math.max(1, Math.floor(notify.watchdogMs / 2)),
  );
}

/** The first-trust scan of a pinned server's lock, counted by severity (offline: tools.lock only). A lock that
 *  cannot be read now is reported by the verification, not here. */
function lockedFindings(paths: HomePaths, id: string, pinned: boolean): { findings?: Record<'high' | 'medium' | 'low', number> } {
  if (!pinned) return {};
  try {
    const counts = { high: 0, medium: 0, low: 0 };
    const r = scanLocked(paths, id);
    for (const f of r.findings) counts[f.severity]++;
    return { findings: counts };
  } catch (err) {
    if (err instanceof WardenError) return {};
    throw err;
  }
}

/** Runs the daemon on an opened home until SIGTERM or SIGINT; `listen` is a loopback address (checked by the
 *  caller), `notify` the sd_notify link, taken from the environment before anything was started. */
export async function runDaemon(paths: HomePaths, listen: { host: string; port: number }, notify: Notifier): Promise<number> {
  const { host, port } = listen;
  let good: Good = loadGood(paths);
  const progress = new Progress();
  const startedAt = new Date();
  const metrics = new WardenMetrics(startedAt, () => progress.stalled().length);
  const describeServers = (): void =>
    metrics.setServers(Object.fromEntries(Object.entries(good.servers.servers).map(([id, s]) => [id, { posture: s.posture, pinned: good.pinned.includes(id), verifyEvery: s.verifyEvery, ...lockedFindings(paths, id, good.pinned.includes(id)) }])));
  describeServers();
  const serverStates = new Map<string, { state: string; since: string }>();
  const verifications = new Map<string, VerificationResult>();
  const base = recorder(paths, good.servers.alerts, say, false);
  const rec: Recorder = {
    record: (e) => {
      base.record(e);
      metrics.observe(e as unknown as Record<string, unknown>);
    },
    flush: () => base.flush(),
  };

  const sweeper = new Sweeper(() => sweepAndAudit(paths, say, (e) => metrics.observe(e as unknown as Record<string, unknown>)), progress, say);
  // A `run` whose connection closes may have died (SIGKILL, OOM): its group is swept once that process is gone.
  // The kernel closes a dying process's sockets before it leaves /proc, and until then its supervisor still
  // looks alive to the sweep, so the daemon waits (bounded) for the pid the `run` said it has.
  const sweepAfterDisconnect = (pid: number | undefined): void => {
    const deadline = Date.now() + 5_000;
    const poll = (): void => {
      if (pid === undefined || startTimeOf(pid) === undefined || Date.now() > deadline) sweeper.request();
      else setTimeout(poll, 20).unref();
    };
    poll();
  };
  const events = await listenForEvents(paths.eventSocket, (e) => metrics.observe(e), sweepAfterDisconnect);
  const started = startedAt.toISOString();
  await sweeper.start(); // at start, then every minute
  // Attestation state per server, and what to watch for it. Rounds run one at a time in a worker thread; a
  // server asked for during a round is re-checked in the next one.
  const lastState = new Map<string, string>();
  const targets = new Map<string, WatchTarget[]>();
  const cacheStats = { hits: 0, misses: 0 };
  const pending = new Set<string>();
  let running: Promise<void> | undefined;
  const apply = (id: string, a: Attested | undefined): void => {
    if (!a) return void targets.delete(id);
    targets.set(id, a.targets);
    const key = `${a.state}|${a.reason}`;
    if (lastState.get(id) === key) return;
    lastState.set(id, key);
    serverStates.set(id, { state: a.state, since: new Date().toISOString() });
    if (a.state === 'allowed') return;
    say(`server '${id}' would now be refused: ${a.reason}`);
    rec.record({ event: 'binary_changed', server: id, code: a.state, reason: a.reason });
  };
  const rounds = async (): Promise<void> => {
    try {
      while (pending.size > 0) {
        const ids = [...pending].filter((id) => Object.hasOwn(good.servers.servers, id));
        pending.clear();
        const done = progress.begin('attestation round', MAX_ROUND_MS);
        try {
          const r = await attestInWorker({ paths, good, ids });
          cacheStats.hits += r.hits;
          cacheStats.misses += r.misses;
          // Set here, not only when /status is asked: a scraper of /metrics alone would read them stale.
          metrics.cacheHits.set(cacheStats.hits);
          metrics.cacheMisses.set(cacheStats.misses);
          if (r.cacheError) say(r.cacheError);
          for (const id of ids) apply(id, r.results[id]);
        } catch (err) {
          say(`re-attesting ${ids.map((id) => `'${id}'`).join(', ')} failed: ${(err as Error).message}`);
        } finally {
          done();
        }
        await watcher.set([...configTargets(paths), ...[...targets.values()].flat()]);
      }
    } finally {
      running = undefined;
    }
  };
  const attest = (ids: string[]): Promise<void> => {
    for (const id of ids) pending.add(id);
    return (running ??= rounds());
  };
  // While the daemon's own bundle apply writes the trust files one after another, a reload would see some new and
  // some old (servers.json's new rules beside warden.lock's old pin: a false rules_changed outside_cli): held, and
  // done once the apply has finished.
  let fleetApplying = false;
  let reloadHeld = false;
  const onConfigChange = (): void => void (fleetApplying ? (reloadHeld = true) : reload('a trust file changed'));
  const watcher = new ParentDirWatcher((key) => (key === CONFIG ? onConfigChange() : void attest([key])), 50, say);
  const checkAll = async (): Promise<void> => {
    for (const id of [...targets.keys()]) if (!Object.hasOwn(good.servers.servers, id)) targets.delete(id);
    await attest(Object.keys(good.servers.servers));
  };

  const verifyNow = scheduledVerifier(paths, (id) => Object.hasOwn(good.servers.servers, id), rec, say, progress, (id, r) => verifications.set(id, r));
  const timers: NodeJS.Timeout[] = [];
  const schedule = (): void => {
    for (const t of timers.splice(0)) clearInterval(t);
    for (const [id, s] of Object.entries(good.servers.servers)) if (s.verifyEvery > 0) timers.push(setInterval(() => void verifyNow(id), s.verifyEvery * 1000));
  };
  const summary = (): string => `watching ${watcher.directories} directories for ${Object.keys(good.servers.servers).length} server(s)`;

  const reload = async (why: string): Promise<void> => {
    const done = progress.begin('reload', MAX_RELOAD_MS);
    try {
      try {
        await settlePendingCommit(paths.home);
        good = loadGood(paths);
      } catch (err) {
        if (!(err instanceof WardenError)) throw err;
        say(`refused the new configuration (${why}): ${err.message} The last good configuration stays in force.`);
        rec.record({ event: 'config_invalid', code: err.code, reason: err.message });
        return;
      }
      describeServers();
      fleet.configure(good.servers);
      await rulesWatch.check();
      await checkAll();
      schedule();
    } finally {
      done();
    }
  };

  const rulesWatch = new RulesWatch(paths, rec, say);
  const fleet = new FleetSource(paths, rec, metrics, progress, say, {
    applying: (on) => {
      fleetApplying = on;
      if (!on && reloadHeld) void reload('a trust file changed during a bundle apply');
      if (!on) reloadHeld = false;
    },
    applied: (serial) => reload(`trust bundle serial ${serial} applied`),
  });
  fleet.configure(good.servers);
  await rulesWatch.check();
  await checkAll();
  let metricsUrl = '';
  const status = (): DaemonStatus => {
    metrics.cacheHits.set(cacheStats.hits);
    metrics.cacheMisses.set(cacheStats.misses);
    const servers: DaemonStatus['servers'] = {};
    for (const id of Object.keys(good.servers.servers)) {
      const a = serverStates.get(id);
      servers[id] = { attestation: a ?? null, lastVerification: verifications.get(id) ?? null };
    }
    return { home: paths.home, pid: process.pid, startedAt: started, metrics: metricsUrl, watchedDirectories: watcher.directories, servers };
  };
  const web = await serveHttp({ host, port }, metrics, status);
  metricsUrl = `${web.url}/metrics`;
  const local = await serveHttp({ socketPath: paths.statusSocket }, metrics, status);
  say(`metrics at ${web.url}/metrics, status at ${web.url}/status and on ${paths.statusSocket}, events on ${paths.eventSocket}`);
  say(summary() + ` in ${paths.home}`);
  schedule();
  progress.probe('metrics and status endpoint', () => web.server.listening && local.server.listening);
  progress.probe('event socket', () => events.listening);
  notify.send(`READY=1\nSTATUS=${summary()}`);
  const watchdog = runWatchdog(notify, progress);
  fleet.request(); // once at start, then every interval

  process.on('SIGHUP', () => {
    notify.send(`RELOADING=1\nMONOTONIC_USEC=${process.hrtime.bigint() / 1000n}`);
    void reload('SIGHUP').finally(() => {
      notify.send(`READY=1\nSTATUS=${summary()}`);
      fleet.request();
    });
  });
  await new Promise<void>((resolve) => {
    for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => resolve());
  });
  notify.send('STOPPING=1');
  clearInterval(watchdog);
  sweeper.stop();
  await fleet.stop();
  for (const t of timers) clearInterval(t);
  await watcher.close();
  web.server.close();
  local.server.close();
  events.close();
  for (const sock of [paths.statusSocket, paths.eventSocket]) fs.rmSync(sock, { force: true });
  await rec.flush();
  notify.close();
  say('stopped');
  return 0;
}
