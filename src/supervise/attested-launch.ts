import { attestedFiles } from '../attest/module-set.js';
import { completePlan, type LaunchPlan } from '../attest/plan.js';
import { appendAudit } from '../audit/log.js';
import type { AuditEvent, ExitEvent, GuardReportOverflowEvent } from '../audit/events.js';
import { WardenError } from '../error.js';
import { removeCgroup, type Cgroup } from '../launch/cgroup.js';
import { DEFAULT_STOP, stopSession } from '../launch/kill.js';
import type { GateEnd, ModuleGuard } from '../launch/module-guard.js';
import { removeRunRecord } from '../launch/run-records.js';
import { SessionScanner, type SessionTarget } from '../launch/session-scan.js';
import { HolderCheck, readStreamEnds } from '../launch/stream-holders.js';
import { verifyExecuted, wardenEndOf, type ServerProcess } from '../launch/spawn.js';
import type { StatKey } from '../attest/stat-key.js';
import type { HomePaths } from '../store/paths.js';
import type { ServerConfig } from '../store/servers.js';
import type { Egress } from '../sandbox/egress.js';
import type { ObservedLaunch } from '../sandbox/observe.js';
import type { DecoyWatch } from '../sandbox/decoys.js';
import type { WriteTrace } from '../sandbox/write-trace.js';
import { verifyMappedCode } from '../launch/mapped-files.js';
import { artifactRecords, prepareLaunch, saveCache, type LaunchOptions, type RecordLaunch } from './launch-prepare.js';
import { spawnPrepared, type Spawned } from './launch-spawn.js';

export { artifactRecords, type LaunchRefusal } from './launch-prepare.js';

// The attested launch, shared by `run` and by the verbs that fetch a surface out of band (lock, verify, diff,
// pin), in three steps: prepare (launch-prepare.ts: resolve and digest, match the allowlist, the environment and
// the module guard), spawn (launch-spawn.ts: its own group and cgroup, the executed inode verified, the group
// recorded under run/), complete (here: what the gate waits for judged, the gate opened, the launch audited).
// A warden started with a preload launches nothing (attest/self.ts). Every refusal is audited and thrown as a
// WardenError carrying the facts gathered so far; one found after the spawn kills the session first.

export interface Launched {
  child: ServerProcess;
  pid: number;
  plan: LaunchPlan;
  server: ServerConfig;
  started: number;
  /** What stopping the session looks for: its group, cgroup, marker and descendants. */
  target: SessionTarget;
  cgroup: Cgroup | undefined;
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** Throws EXEC_MISMATCH or EXEC_HANDED_OFF when the server process no longer runs the digested executable
   *  (a script that exec'd another program after the check at spawn). Checked before each line it writes. */
  verifyWriter: () => void;
  /** The module guard of a node server (its report() says what it refused, or at enrollment what was loaded outside the set). */
  guard?: ModuleGuard;
  /** The network proxy of a sandbox with domains (sandbox/egress.ts): closed with the session. */
  egress?: Egress;
  /** An observed enrollment launch (sandbox/observe.ts): its writes are read once it ended. */
  observed?: ObservedLaunch;
  /** A confined session's decoys (sandbox/decoys.ts): looked at once more and removed with the session. */
  decoys?: DecoyWatch;
  /** A confined session's tracer of denied writes (sandbox/write-trace.ts): stopped with the session. */
  writes?: WriteTrace;
}

/** Resolves, judges, spawns and releases a server (prepare, spawn, complete). */
export async function attestAndLaunch(paths: HomePaths, id: string, say: (m: string) => void, recordEvent?: RecordLaunch, opts: LaunchOptions = {}): Promise<Launched> {
  const record: RecordLaunch = recordEvent ?? ((e) => appendAudit(paths.audit, e));
  return completeLaunch(await spawnPrepared(await prepareLaunch(paths, id, say, record, opts)));
}

/**
 * After the spawn: `beforeGate` (what `run` does while node starts: its own checks, which may refuse), then the
 * script, package tree and modules of a gated server digested and judged, its cgroup settled, the gate opened
 * with the attested set, and the launch audited as allowed. Any refusal kills the session before the gate opens.
 */
export async function completeLaunch(spawned: Spawned, beforeGate?: () => Promise<void>): Promise<Launched> {
  const { prep, child, pid, started, target, exited } = spawned;
  const { id, resolved, facts, guard, observed, record } = prep;
  const engine = prep.sandbox?.launch?.engine;
  const exe = resolved.executable;
  let plan = prep.plan;
  let allowed = false; // once the launch was audited as allowed, a later refusal is audited by verifyWriter
  let audited = false;
  let holders: HolderCheck | undefined; // from the first line on: who else holds the server's stdout
  let mapped = false; // before its first line every object ld.so was to map must be mapped (launch-spawn.ts: at spawn)
  const verifyWriter = (): void => {
    try {
      verifyExecuted(spawned.serverPid, exe.key as StatKey, exe.path, { serverId: id, script: resolved.script?.realpath });
      if (!mapped) {
        mapped = true;
        verifyMappedCode(spawned.serverPid, resolved.startup, id, true);
      }
      holders?.beforeLine();
    } catch (err) {
      // Found after the launch was allowed: the refusal is recorded as a launch refusal of its own, once.
      if (err instanceof WardenError && !audited && allowed) {
        audited = true;
        void record({ event: 'launch', server: id, decision: 'refuse', reason: err.message, code: err.code, ...facts, pid, pgid: pid });
      }
      throw err;
    }
  };
  try {
    await beforeGate?.();
    if (!plan) {
      // Behind the gate: node has started, none of the server's code is loaded until release().
      plan = await completePlan(resolved, prep.spec, prep.cache);
      facts.artifacts = artifactRecords(plan);
      const late = prep.judge(plan.artifacts);
      if (late) throw late;
    }
    if (spawned.held && spawned.cgroup()) {
      await spawned.settleCgroup();
      if (!spawned.cgroup()) spawned.recordRun(); // the record named a cgroup the server never joined
    }
    if (guard) await guard.release(child.stdio[3] as GateEnd, attestedFiles(plan) ?? new Map(), spawned.guardDenials);
    const interpreted = plan.artifacts.some((a) => a.kind === 'script') && plan.nodeScript === undefined;
    const attested = {
      expected: exe.key as StatKey,
      leader: spawned.serverPid,
      ...(interpreted ? { leaderCmdline: Buffer.from([engine || observed ? resolved.file : plan.argv0, ...prep.args].map((a) => `${a}\0`).join('')) } : {}),
      ...(engine ? { engine: { pids: spawned.enginePids, key: engine.key } } : {}),
    };
    holders = new HolderCheck(id, exe.path, attested, readStreamEnds(spawned.serverPid, wardenEndOf(child)), new SessionScanner(target));
  } catch (err) {
    return spawned.abort(err);
  }
  saveCache(prep.paths, id, prep.cache, prep.say);
  prep.cache.forget(); // saved: nothing of this launch digests again
  await record({ event: 'launch', server: id, decision: 'allow', reason: 'all artifacts allowlisted', ...facts, pid, pgid: pid });
  allowed = true;
  const { egress, decoys, writes } = spawned;
  return { child, pid, plan, server: prep.server, started, target, cgroup: spawned.cgroup(), exited, verifyWriter, ...(guard ? { guard } : {}), ...(egress ? { egress } : {}), ...(observed ? { observed } : {}), ...(decoys ? { decoys } : {}), ...(writes ? { writes } : {}) };
}

export interface SessionCounts {
  nonJsonLines: number;
  oversizeLines: number;
  refusedClientLines: number;
}

/** `promise`, or `fallback` after `ms`; the timer is cleared either way, so a settled race keeps no process
 *  alive (a dangling timer held every enrolling command ~2 s after its work was done). */
async function orTimeout<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<F>((r) => (timer = setTimeout(() => r(fallback), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Ends a launched server: its stdin is closed and it has a grace period to exit (skipped when it already
 * exited or the warden closed the session), then its session (process group, cgroup, and descendants found by marker or parent) gets SIGTERM and
 * SIGKILL; the exit is audited, and a module guard's report past its cap (`guard_report_overflow`, through `record`
 * when given: `run`'s recorder, which alerts).
 */
export async function stopLaunched(paths: HomePaths, id: string, launched: Launched, cause: ExitEvent['cause'], counts: SessionCounts, opts: { grace: boolean; signal?: string; say: (m: string) => void; record?: (e: AuditEvent) => void }): Promise<{ code: number | null; refusedModules: string[]; reportOverflow?: GuardReportOverflowEvent }> {
  const { child, pid, exited, started } = launched;
  if (opts.grace) {
    child.stdin.end();
    await orTimeout(exited, DEFAULT_STOP.graceMs, undefined);
  }
  const stop = await stopSession(launched.target, DEFAULT_STOP);
  launched.egress?.close();
  launched.decoys?.close(); // a read in its last moments is seen once nothing of it runs
  await launched.writes?.close(); // nothing of it runs: its last lines were read (SIGKILL after the group was gone)
  launched.observed?.finish(); // what it wrote is complete once nothing of it runs
  const exit = await orTimeout(exited, 1000, { code: null, signal: null });
  if (stop.gone) {
    if (launched.cgroup) await removeCgroup(launched.cgroup);
    removeRunRecord(paths.runDir, pid); // else kept: the next sweep tries again
  } else {
    opts.say(`processes of server '${id}' (pids ${stop.pids.join(', ')}) survived SIGKILL; check 'ps -o pid,stat,cmd -p ${stop.pids.join(',')}'.`);
  }
  // The session is stopped: the module guard's report is complete (reading it closes it).
  const report = launched.guard?.report();
  const refusedModules = report?.refused ?? [];
  await appendAudit(paths.audit, {
    event: 'exit',
    server: id,
    pid,
    pgid: pid,
    cause,
    exitCode: exit.code,
    signal: exit.signal ?? opts.signal ?? null,
    stoppedBy: stop.by,
    groupGone: stop.gone,
    escaped: stop.escapedPids.length,
    escapedPids: stop.escapedPids,
    containment: stop.containment,
    ...counts,
    durationMs: Date.now() - started,
  });
  if (!report?.overflow) return { code: exit.code, refusedModules };
  const reportOverflow: GuardReportOverflowEvent = { event: 'guard_report_overflow', server: id, pid, ...report.overflow };
  opts.say(`server '${id}' ${tamperedReport(report.overflow)}: the report counts as tampered with (the server writes to it itself); ${report.overflow.why === 'grew' ? 'what it held before the cap was judged as ever' : 'what the warden had read of it was judged as ever'}. Find out why the server writes to its file descriptor 4.`);
  if (opts.record) opts.record(reportOverflow);
  else await appendAudit(paths.audit, reportOverflow);
  return { code: exit.code, refusedModules, reportOverflow };
}

/** What a server did to its module guard's report, in words (an alert's and an enrollment refusal's). */
export function tamperedReport(o: { bytes: number; cap: number; why: 'grew' | 'shrank' | 'unreadable' }): string {
  if (o.why === 'grew') return `wrote ${o.bytes} bytes to its module guard's report, past its cap of ${o.cap}`;
  if (o.why === 'shrank') return `cut its module guard's report below what the warden had read of it (it was ${o.bytes} bytes at most)`;
  return `left its module guard's report unreadable at the session's end (${o.bytes} bytes at most)`;
}
