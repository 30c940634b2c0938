import { matchAllowlist, refusalReason } from '../attest/match.js';
import { attestedFiles } from '../attest/module-set.js';
import { completePlan, resolveLaunch, type Artifact, type CommandSpec, type LaunchPlan, type ResolvedLaunch } from '../attest/plan.js';
import type { DigestCache } from '../attest/cache.js';
import { isOwnNode, refuseIfPreloaded } from '../attest/self.js';
import { appendAudit } from '../audit/log.js';
import type { ArtifactRecord, AuditEvent, ExitEvent, LaunchEvent } from '../audit/events.js';
import { WardenError } from '../error.js';
import { buildEnv } from '../launch/env.js';
import { createSessionCgroup, removeCgroup, type Cgroup } from '../launch/cgroup.js';
import { DEFAULT_STOP, killSessionNow, stopSession } from '../launch/kill.js';
import { MARKER_ENV, newMarker } from '../launch/marker.js';
import { prepareModuleGuard, type GateEnd, type ModuleGuard } from '../launch/module-guard.js';
import { loadsRequiredEsmUnguarded, nodeRelease } from '../launch/node-release.js';
import { realUidOf, startTimeOf } from '../launch/proc.js';
import { checkRunDir, removeRunRecord, writeRunRecord } from '../launch/run-records.js';
import { SessionScanner, type SessionTarget } from '../launch/session-scan.js';
import { HolderCheck, readStreamEnds } from '../launch/stream-holders.js';
import { verifyMappedCode } from '../launch/mapped-files.js';
import { spawnServer, verifyExecuted, wardenEndOf, type ServerProcess } from '../launch/spawn.js';
import type { StatKey } from '../attest/stat-key.js';
import { loadAllowlist } from '../store/allowlist.js';
import { loadDigestCache, saveDigestCache } from '../store/digest-cache-file.js';
import { loadLocksOf } from '../store/lock-entry-cache.js';
import type { Locks } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, serverById, type ServerConfig } from '../store/servers.js';
import { sandboxArgs, sandboxForLaunch, sandboxedServer, type SandboxLaunch } from '../sandbox/launch.js';
import type { SandboxMounts } from '../sandbox/plan.js';
import { observeLaunch, observedServer, type Observed, type ObservedLaunch } from '../sandbox/observe.js';
import { observeContext } from '../sandbox/observe-context.js';
import { egressArgs, proxyEnv, recordDenials, startEgress, type Egress } from '../sandbox/egress.js';
import type { DecoyWatch, Decoys } from '../sandbox/decoys.js';
import type { Readable, Writable } from 'node:stream';
import { recordNodeRelease, recordedNodeRelease } from '../store/node-releases.js';
import { packageChangeText } from './tree-change.js';

// The attested launch, shared by `run` and by the verbs that fetch a surface out of band (lock, verify, diff,
// pin): resolve and digest, match the allowlist, spawn in its own group with a minimal environment, verify the
// executed inode, record the group under run/, audit the launch. A warden started with a preload launches
// nothing (attest/self.ts). Every refusal is audited here and thrown as
// a WardenError carrying the facts gathered so far.

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
}

export type LaunchRefusal = WardenError & { facts?: Partial<LaunchEvent> };

/** Records the launch's events: its decision, and what a sandbox's proxy refused while it runs. */
type RecordLaunch = (e: AuditEvent) => unknown;

/** `learnModules`: the enrollment launch; the module guard records what is loaded outside the set instead of refusing it.
 *  `locks`: the locks as the caller read them (`run`), else read here for the sandbox's pin. */
export async function attestAndLaunch(paths: HomePaths, id: string, say: (m: string) => void, recordEvent?: RecordLaunch, opts: { learnModules?: boolean; locks?: Locks; observe?: Observed } = {}): Promise<Launched> {
  const record: RecordLaunch = recordEvent ?? ((e) => appendAudit(paths.audit, e));
  const refused = async (err: WardenError, facts: Partial<LaunchEvent>): Promise<never> => {
    await record({ event: 'launch', server: id, decision: 'refuse', reason: err.message, code: err.code, ...facts });
    throw Object.assign(err, { facts });
  };
  try {
    refuseIfPreloaded();
  } catch (err) {
    if (err instanceof WardenError) return refused(err, {});
    throw err;
  }
  const config = loadServers(paths);
  const server = serverById(config, id, paths);
  const cache = loadDigestCache(paths, id);
  const spec: CommandSpec = { serverId: id, command: server.command, args: server.args, cwd: server.cwd, trustedPath: config.path, modules: server.modules };
  const allowlist = loadAllowlist(paths).entries;
  const judge = (artifacts: Artifact[]): WardenError | undefined => {
    const att = matchAllowlist(artifacts, allowlist);
    const reason = refusalReason(att);
    if (!reason) {
      for (const a of artifacts) delete a.treeListing; // it only names what changed: an admitted session drops it
      return undefined;
    }
    // A changed package tree: which files were added, removed or changed since it was allowlisted.
    const first = att.verdicts.find((v) => v.state !== 'allowed');
    const changes = first?.state === 'digest_mismatch' ? packageChangeText(paths, first.artifact, first.expected) : '';
    return new WardenError(reason.code, `${reason.text}.${changes ? ` ${changes}` : ''}`);
  };
  let resolved: ResolvedLaunch;
  let plan: LaunchPlan | undefined;
  let sandbox: { launch?: SandboxLaunch; facts: LaunchEvent['sandbox'] };
  try {
    // A declared sandbox is applied or the launch refused, before anything is resolved (sandbox/launch.ts).
    sandbox = sandboxForLaunch(paths, id, server, config, (opts.locks ?? loadLocksOf(paths, id, true)).warden.get(id));
    resolved = await resolveLaunch(spec, cache);
    // node running a script starts behind the module guard's gate as soon as the interpreter is judged; its
    // script, package tree and modules are digested while node starts, and judged before the gate opens
    // (docs/adr/0019-fast-launch.md). Anything else starts only once all of it is judged, and so does a "#!"
    // script whose line gives node an option that may load code (it would run before the preload).
    // A confined server's files are known before it starts: they are mounted read-only in its sandbox.
    if (!resolved.gated || sandbox.launch) plan = await completePlan(resolved, spec, cache);
  } catch (err) {
    if (err instanceof WardenError) return refused(err, {});
    throw err;
  }
  // The session marker goes last, so no configured value can replace it (docs/adr/0013).
  const marker = newMarker();
  const env = { ...buildEnv({ trustedPath: config.path, env: server.env, passEnv: server.passEnv }), ...(sandbox.launch?.egress ? proxyEnv() : {}), [MARKER_ENV]: marker };
  const facts: Partial<LaunchEvent> = {
    resolvedPath: resolved.file,
    chain: resolved.executable.chain,
    artifacts: plan ? artifactRecords(plan) : artifactRecords({ artifacts: [resolved.executable, ...resolved.libraries] }),
    argv: [resolved.argv0, ...resolved.args],
    envNames: Object.keys(env).sort(),
    sandbox: sandbox.facts,
  };
  const early = judge(plan?.artifacts ?? [resolved.executable, ...resolved.libraries]);
  if (early) {
    if (plan) saveCache(paths, id, cache, say);
    return refused(early, facts);
  }

  let confine: (SandboxMounts & { decoys?: Decoys }) | undefined; // bwrap's arguments for a confined server, its grants' descriptors, its decoys
  try {
    checkRunDir(paths.runDir); // the record written below must be one no other user can plant or replace
    if (sandbox.launch) confine = sandboxArgs(paths, id, sandbox.launch, plan as LaunchPlan, server.cwd, config);
    if (confine && facts.sandbox?.state === 'confined') facts.sandbox = { ...facts.sandbox, decoys: confine.decoys?.count ?? 0 };
  } catch (err) {
    if (err instanceof WardenError) return refused(err, facts);
    throw err;
  }
  // A node server loads the module guard first, which refuses any module file outside the attested set.
  let guard: ModuleGuard | undefined;
  if (resolved.node) {
    const memo = { get: (sha: string) => recordedNodeRelease(paths, sha), set: (sha: string, r: string) => recordNodeRelease(paths, sha, r) };
    const release = await nodeRelease(resolved.file, resolved.executable.sha256, isOwnNode(resolved.executable.key), memo);
    try {
      guard = prepareModuleGuard(id, opts.learnModules ? 'learn' : 'enforce', paths.runDir, release !== undefined && loadsRequiredEsmUnguarded(release));
    } catch (err) {
      confine?.close();
      confine?.decoys?.discard();
      if (err instanceof WardenError) return refused(err, facts);
      throw err;
    }
  }
  const args = [...(guard?.args ?? []), ...resolved.args];
  facts.argv = [resolved.argv0, ...args];
  const engine = sandbox.launch?.engine;
  // A sandbox with domains: bwrap reports its namespace and waits on the two fds after the module guard's.
  const egressFds = sandbox.launch?.egress ? [3 + (guard?.stdio.length ?? 0), 4 + (guard?.stdio.length ?? 0)] as const : undefined;
  // The grants' descriptors come after those, bound from there (sandbox/plan.ts).
  const grantBase = 3 + (guard?.stdio.length ?? 0) + (egressFds ? 2 : 0);
  let command = engine && confine ? { file: engine.file, args: [...confine.args(grantBase), ...(egressFds ? egressArgs(...egressFds) : []), '--', resolved.file, ...args], argv0: engine.file } : { file: resolved.file, args, argv0: resolved.argv0 };
  // An enrollment launch (no sandbox declared yet) runs with its writes redirected and listed (docs/adr/0063).
  const observed = opts.observe && !engine ? observeLaunch(observeContext(paths, { path: config.path, sandboxes: Object.fromEntries(Object.entries(config.servers).map(([other, s]) => [other, s.sandbox])) }, env, server, resolved), resolved.file, args, opts.observe) : undefined;
  if (observed) command = observed.command;

  let child: ServerProcess;
  let cgroup = createSessionCgroup();
  // A gated server on the warden's own node runs nothing of its own until release(): it joins its cgroup while its
  // tree is digested, and release waits for that (docs/adr/0033-held-server-joins-its-cgroup.md). A file merely
  // named node could run code of its own before the gate, and any other server is not held: born in it.
  // A confined server is born in it: bwrap forks before it could be moved.
  const held = resolved.gated && guard !== undefined && isOwnNode(resolved.executable.key) && !engine && !observed;
  let contained: Promise<boolean>;
  try {
    ({ child, contained } = await spawnServer({ ...command, cwd: engine ? undefined : server.cwd, env, cgroup, held, extraStdio: [...(guard?.stdio ?? []), ...(egressFds ? (['pipe', 'pipe'] as const) : []), ...(confine?.fds ?? [])] }));
  } catch (err) {
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
  const exe = resolved.executable;
  let verifyWriter = (): void => {};
  let allowed = false; // once the launch was audited as allowed, a later refusal is audited by verifyWriter
  let serverPid = pid; // a confined server's own pid: bwrap's grandchild
  let enginePids: number[] = [];
  let egress: Egress | undefined;
  const denied = recordDenials(id, record, say); // what its sandbox refused (proxy) or saw (decoys), bounded together
  const decoys = confine?.decoys?.watch(denied);
  try {
    if (!held) await settleCgroup();
    recordRun();
    const outward = sandbox.launch?.egress;
    if (outward && egressFds) egress = await startEgress({ id, ...outward, info: child.stdio[egressFds[0]] as Readable, block: child.stdio[egressFds[1]] as Writable, denied });
    if (engine) ({ server: serverPid, enginePids } = await sandboxedServer(pid, engine, () => child.exitCode === null && child.signalCode === null));
    if (engine) facts.serverPid = serverPid;
    if (observed) await observedServer(pid, observed.helpers, [resolved.file, ...args], () => child.exitCode === null && child.signalCode === null);
    if (!exe.key) throw new WardenError('EXEC_MISMATCH', 'no digested executable to verify against.');
    let audited = false;
    let holders: HolderCheck | undefined; // from the first line on: who else holds the server's stdout
    // The objects ld.so mapped: at spawn (it may still be mapping them: only what is there is judged), and before
    // its first line, when every one must be there.
    let mapChecks = 0;
    verifyWriter = () => {
      try {
        verifyExecuted(serverPid, exe.key as StatKey, exe.path, { serverId: id, script: resolved.script?.realpath });
        if (mapChecks < 2) {
          mapChecks++;
          verifyMappedCode(serverPid, resolved.startup, id, mapChecks === 2);
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
    verifyWriter();
    if (!plan) {
      // Behind the gate: node has started, none of the server's code is loaded until release().
      plan = await completePlan(resolved, spec, cache);
      facts.artifacts = artifactRecords(plan);
      const late = judge(plan.artifacts);
      if (late) throw late;
    }
    if (held && cgroup) {
      await settleCgroup();
      if (!cgroup) recordRun(); // the record named a cgroup the server never joined
    }
    if (guard) await guard.release(child.stdio[3] as GateEnd, attestedFiles(plan) ?? new Map());
    const interpreted = plan.artifacts.some((a) => a.kind === 'script') && plan.nodeScript === undefined;
    const attested = {
      expected: exe.key,
      leader: serverPid,
      ...(interpreted ? { leaderCmdline: Buffer.from([engine || observed ? resolved.file : plan.argv0, ...args].map((a) => `${a}\0`).join('')) } : {}),
      ...(engine ? { engine: { pids: enginePids, key: engine.key } } : {}),
    };
    holders = new HolderCheck(id, exe.path, attested, readStreamEnds(serverPid, wardenEndOf(child)), new SessionScanner(target));
  } catch (err) {
    guard?.close();
    egress?.close();
    await settleCgroup();
    const stop = await killSessionNow(target);
    if (cgroup && stop.gone) await removeCgroup(cgroup);
    removeRunRecord(paths.runDir, pid);
    observed?.finish();
    decoys?.close();
    if (err instanceof WardenError) return refused(err, { ...facts, pid, pgid: pid });
    throw err;
  } finally {
    saveCache(paths, id, cache, say);
  }
  await record({ event: 'launch', server: id, decision: 'allow', reason: 'all artifacts allowlisted', ...facts, pid, pgid: pid });
  allowed = true;
  return { child, pid, plan: plan as LaunchPlan, server, started, target, cgroup, exited, verifyWriter, ...(guard ? { guard } : {}), ...(egress ? { egress } : {}), ...(observed ? { observed } : {}), ...(decoys ? { decoys } : {}) };
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
 * SIGKILL; the exit is audited.
 */
export async function stopLaunched(paths: HomePaths, id: string, launched: Launched, cause: ExitEvent['cause'], counts: SessionCounts, opts: { grace: boolean; signal?: string; say: (m: string) => void }): Promise<{ code: number | null; refusedModules: string[] }> {
  const { child, pid, exited, started } = launched;
  if (opts.grace) {
    child.stdin.end();
    await orTimeout(exited, DEFAULT_STOP.graceMs, undefined);
  }
  const stop = await stopSession(launched.target, DEFAULT_STOP);
  launched.egress?.close();
  launched.decoys?.close(); // a read in its last moments is seen once nothing of it runs
  launched.observed?.finish(); // what it wrote is complete once nothing of it runs
  const exit = await orTimeout(exited, 1000, { code: null, signal: null });
  if (stop.gone) {
    if (launched.cgroup) await removeCgroup(launched.cgroup);
    removeRunRecord(paths.runDir, pid); // else kept: the next sweep tries again
  } else {
    opts.say(`processes of server '${id}' (pids ${stop.pids.join(', ')}) survived SIGKILL; check 'ps -o pid,stat,cmd -p ${stop.pids.join(',')}'.`);
  }
  // The session is stopped: the module guard's report is complete (reading it closes it).
  const refusedModules = launched.guard?.report().refused ?? [];
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
  return { code: exit.code, refusedModules };
}

/** The digest cache is saved whatever the verdict: the next launch of an unchanged tree reads no file again. */
function saveCache(paths: HomePaths, id: string, cache: DigestCache, say: (m: string) => void): void {
  const problem = saveDigestCache(paths, id, cache);
  if (problem) say(problem);
}

/** The artifacts of a plan as the audit log records them. */
export function artifactRecords(plan: Pick<LaunchPlan, 'artifacts'>): ArtifactRecord[] {
  return plan.artifacts.map((a) => ({ kind: a.kind, path: a.path, sha256: a.sha256, chain: a.chain }));
}
