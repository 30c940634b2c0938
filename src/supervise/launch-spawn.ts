import type { Readable, Writable } from 'node:stream';
import { isOwnNode } from '../attest/self.js';
import type { StatKey } from '../attest/stat-key.js';
import { WardenError } from '../error.js';
import { createSessionCgroup, removeCgroup, type Cgroup } from '../launch/cgroup.js';
import { killSessionNow } from '../launch/kill.js';
import { realUidOf, startTimeOf } from '../launch/proc.js';
import { removeRunRecord, writeRunRecord } from '../launch/run-records.js';
import type { SessionTarget } from '../launch/session-scan.js';
import { spawnServer, verifyExecuted, type ServerProcess } from '../launch/spawn.js';
import { verifyMappedCode } from '../launch/mapped-files.js';
import type { DecoyWatch } from '../sandbox/decoys.js';
import type { Egress } from '../sandbox/egress.js';
import type { WriteTrace } from '../sandbox/write-trace.js';
import type { GuardDenial, GuardRead } from '../launch/guard-denials.js';
import { saveCache, type Prepared } from './launch-prepare.js';

// The attested launch's spawn (after launch-prepare.ts): the server started in its own group and session cgroup,
// recorded under run/ for the orphan sweep, its executed inode verified. A node server behind the module guard's
// gate runs nothing of its own here: the gate opens in completeLaunch (attested-launch.ts), once every artifact
// is judged. A refusal from here on kills the session first (`abort`), then is audited and thrown.

export interface Spawned {
  prep: Prepared;
  child: ServerProcess;
  pid: number;
  started: number;
  /** What stopping the session looks for: its group, cgroup, marker and descendants. */
  target: SessionTarget;
  cgroup: () => Cgroup | undefined;
  /** Whether the server waits at the gate to join its cgroup (docs/adr/0033-held-server-joins-its-cgroup.md). */
  held: boolean;
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** The server's own pid: bwrap's grandchild for a confined one, else `pid`. */
  serverPid: number;
  enginePids: number[];
  egress: Egress | undefined;
  /** A confined session's decoys, watched from the spawn on (sandbox/decoys.ts). */
  decoys: DecoyWatch | undefined;
  /** A confined session's tracer of denied writes, attached before the spawn (sandbox/write-trace.ts). */
  writes: WriteTrace | undefined;
  /** A confined node server whose denied writes the kernel's tracer does not see: its module guard reports them
   *  (launch/guard-denials.ts), given to the guard's release. */
  guardDenials: { denied: (d: GuardDenial | GuardRead) => void; max: number; secrets: string[] } | undefined;
  egressFds: readonly [number, number] | undefined;
  /** Removes a cgroup the server never joined (once that is known), and re-records the session without it. */
  settleCgroup: () => Promise<void>;
  recordRun: () => void;
  /** Kills the session, removes its record, audits the refusal with the pid and throws it. */
  abort: (err: unknown) => Promise<never>;
}

/** Starts the prepared command; throws, after killing what was started, on a refusal. */
export async function spawnPrepared(prep: Prepared): Promise<Spawned> {
  const { paths, id, resolved, guard, confine, observed, facts, server, env, marker, refused } = prep;
  const engine = prep.sandbox?.launch?.engine;
  // A sandbox with domains: bwrap reports its namespace and waits on the two fds after the module guard's.
  const egressFds = prep.sandbox?.launch?.egress ? ([3 + (guard?.stdio.length ?? 0), 4 + (guard?.stdio.length ?? 0)] as const) : undefined;
  // The grants' descriptors come after those, bound from there (sandbox/plan.ts).
  const grantBase = 3 + (guard?.stdio.length ?? 0) + (egressFds ? 2 : 0);
  let command = engine && confine ? { file: engine.file, args: [...confine.args(grantBase), ...(egressFds ? (await import('../sandbox/egress.js')).egressArgs(...egressFds) : []), '--', resolved.file, ...prep.args], argv0: engine.file } : { file: resolved.file, args: prep.args, argv0: resolved.argv0 };
  if (observed) command = observed.command;

  let child: ServerProcess;
  const early = prep.early; // a confined launch: its cgroup and tracer were started with the sandbox known
  let cgroup = early ? early.cgroup : createSessionCgroup();
  // A gated server on the warden's own node runs nothing of its own until release(): it joins its cgroup while its
  // tree is digested, and release waits for that (docs/adr/0033-held-server-joins-its-cgroup.md). A file merely
  // named node could run code of its own before the gate, and any other server is not held: born in it.
  // A confined server is born in it: bwrap forks before it could be moved.
  const held = resolved.gated && guard !== undefined && isOwnNode(resolved.executable.key) && !engine && !observed;
  let contained: Promise<boolean>;
  // What its sandbox refused (proxy, writes) or saw (decoys), bounded together; the writes' tracer is attached to
  // the session's cgroup before the server is spawned there, so nothing it writes is missed (docs/adr/0066).
  const outward = prep.sandbox?.launch?.egress;
  const denied = early?.denied;
  let writes: WriteTrace | undefined;
  const unobserved = (why: string): void => {
    if (facts.sandbox?.state === 'confined') facts.sandbox = { ...facts.sandbox, writes: 'unobserved', writesWhy: why };
  };
  let guardDenials: Spawned['guardDenials'];
  if (early) {
    const observing = await early.observing;
    writes = observing.trace;
    // Not traced (a warden that is not root, or a tracer that could not start): a node server's guard reports
    // what its fs calls were refused (docs/adr/0068). The operator's "off" turns this off too.
    const byGuard = observing.writes === 'unobserved' && guard !== undefined;
    if (byGuard) guardDenials = { denied: early.denied, max: early.max, secrets: confine?.secrets ?? [] };
    if (facts.sandbox?.state === 'confined') facts.sandbox = { ...facts.sandbox, writes: byGuard ? 'guard' : observing.writes, ...(observing.why ? { writesWhy: observing.why } : {}) };
    void observing.trace?.died.then(unobserved);
  }
  try {
    ({ child, contained } = await spawnServer({ ...command, cwd: engine ? undefined : server.cwd, env, cgroup, held, extraStdio: [...(guard?.stdio ?? []), ...(egressFds ? (['pipe', 'pipe'] as const) : []), ...(confine?.fds ?? [])] }));
  } catch (err) {
    void writes?.close();
    confine?.close();
    confine?.decoys?.discard();
    guard?.close();
    observed?.finish();
    if (cgroup) await removeCgroup(cgroup);
    if (err instanceof WardenError) return refused(err, facts);
    throw err;
  }
  confine?.close(); // the child holds its copies
  const pid = child.pid as number;
  const started = Date.now();
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const uids = [...new Set([process.getuid?.() ?? 0, realUidOf(pid) ?? process.getuid?.() ?? 0])];
  const target: SessionTarget = { pgid: pid, marker, cgroup: cgroup?.dir, uids };
  const recordRun = (): void =>
    writeRunRecord(paths.runDir, {
      serverId: id,
      pgid: pid,
      leaderStart: startTimeOf(pid) ?? '',
      supervisorPid: process.pid,
      supervisorStart: startTimeOf(process.pid) ?? '',
      startedAt: new Date(started).toISOString(),
      marker,
      ...(cgroup ? { cgroup: cgroup.dir } : {}),
      uid: uids[uids.length - 1] as number,
    });
  /** Once the server is in its cgroup or known not to be: one it is not in is removed, and no longer named. */
  const settleCgroup = async (): Promise<void> => {
    if (!cgroup || (await contained)) return;
    await removeCgroup(cgroup);
    cgroup = undefined;
    target.cgroup = undefined;
  };
  const spawned: Spawned = {
    prep, child, pid, started, target, held, exited, egressFds, settleCgroup, recordRun,
    cgroup: () => cgroup,
    serverPid: pid,
    enginePids: [],
    egress: undefined,
    decoys: undefined,
    writes,
    guardDenials,
    abort: async (err) => {
      guard?.close();
      spawned.egress?.close();
      await settleCgroup();
      const stop = await killSessionNow(target);
      if (cgroup && stop.gone) await removeCgroup(cgroup);
      removeRunRecord(paths.runDir, pid);
      observed?.finish();
      spawned.decoys?.close();
      await spawned.writes?.close();
      saveCache(paths, id, prep.cache, prep.say);
      if (err instanceof WardenError) return refused(err, { ...facts, pid, pgid: pid });
      throw err;
    },
  };
  try {
    if (!held) await settleCgroup();
    if (writes && !cgroup) {
      // The server could not be born in its cgroup: the tracer would watch an empty one.
      void writes.close();
      spawned.writes = undefined;
      const why = 'the server could not be placed in its cgroup';
      unobserved(why);
      void prep.record({ event: 'sandbox_writes_unobserved', server: id, when: 'start', why });
    }
    recordRun();
    if (denied) {
      if (early?.diedWhy) unobserved(early.diedWhy);
      spawned.decoys = confine?.decoys?.watch(denied);
      if (outward && egressFds) spawned.egress = await (await import('../sandbox/egress.js')).startEgress({ id, ...outward, info: child.stdio[egressFds[0]] as Readable, block: child.stdio[egressFds[1]] as Writable, denied });
    }
    const alive = (): boolean => child.exitCode === null && child.signalCode === null;
    if (engine) {
      ({ server: spawned.serverPid, enginePids: spawned.enginePids } = await (await import('../sandbox/launch.js')).sandboxedServer(pid, engine, alive));
      facts.serverPid = spawned.serverPid;
    }
    if (observed) await (await import('../sandbox/observe.js')).observedServer(pid, observed.helpers, [resolved.file, ...prep.args], alive);
    const exe = resolved.executable;
    if (!exe.key) throw new WardenError('EXEC_MISMATCH', 'no digested executable to verify against.');
    verifyExecuted(spawned.serverPid, exe.key as StatKey, exe.path, { serverId: id, script: resolved.script?.realpath });
    // The objects ld.so mapped so far (it may still be mapping them: only what is there is judged); every one must
    // be there before the first line (attested-launch.ts, verifyWriter).
    verifyMappedCode(spawned.serverPid, resolved.startup, id, false);
  } catch (err) {
    return spawned.abort(err);
  }
  return spawned;
}
