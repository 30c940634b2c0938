import { dropRecheckKeys, recheckPlan } from '../attest/recheck.js';
import { EXIT_REFUSED } from '../launch/preload/guard.js';
import type { ExitEvent } from '../audit/events.js';
import { WardenError } from '../error.js';
import { answerRefusal } from '../proxy/refuse.js';
import { launchRefused } from '../proxy/refusal-text.js';
import type { Session } from '../proxy/session.js';
import { openHome } from '../store/home.js';
import { loadLocksOf } from '../store/lock-entry-cache.js';
import { resolveHome, type HomePaths } from '../store/paths.js';
import { defaultToolOf, probesOf } from '../canary/probe.js';
import { sweepAndAudit } from './orphan-sweep.js';
import { recorder, type Recorder } from './recorder.js';
import { SERVER_ID_RE, loadServers } from '../store/servers.js';
import { settlePendingCommit } from '../store/update.js';
import { saveClientSeen } from '../store/client-seen.js';
import { sessionRules } from '../rules/gate.js';
import { watchDenied, type DenyWatch } from '../sandbox/deny-watch.js';

/** How long `run` waits, once the session is over, for the rest of the server's stderr (the group is gone). */
const STDERR_DRAIN_MS = 1000;
/** Canary calls per probe at session start (their median is compared with the pinned envelope). */
const SESSION_CANARY_SAMPLES = 3;
import { attestAndLaunch, completeLaunch, stopLaunched, type LaunchRefusal, type Launched } from './attested-launch.js';
import { sandboxPinned } from './launch-prepare.js';
import { spawnPrepared } from './launch-spawn.js';
import type { EarlyRun } from './run-start.js';
import { say } from './run-start.js';
import { printable } from '../escape.js';
import { serverStderrRelay } from './server-stderr.js';

// The supervised session behind `mcp-warden run <id>`, in the order it happens. The client launched us in
// place of the server; stdout belongs to the JSON-RPC stream, so every human message goes to stderr.


/** Refuses the session before launch: tell the client (its first request gets the error) and exit. */
async function refuse(id: string, err: WardenError): Promise<number> {
  say(`${err.code}: mcp-warden refused to launch server '${id}': ${err.message} Run 'mcp-warden status ${id}' for details.`);
  // The client is told the code in the warden's words: the refusal's own message can quote what a package chose.
  const named = SERVER_ID_RE.test(id) ? id : undefined;
  await answerRefusal(process.stdin, process.stdout, launchRefused(named, err.code), { code: err.code, ...(named ? { server: named, hint: `mcp-warden status ${named}` } : {}) });
  // The error's own exit code (2 invalid config, 3 refused, 4 lockfile, 5 inadmissible); only the codes that
  // mean "a check reported" (1) become a refusal here, since no session was held.
  return err.exitCode >= 2 ? err.exitCode : 3;
}

/** Stops the group, records the exit, and returns the exit code of `run`. */
async function finish(paths: HomePaths, id: string, launched: Launched, session: Session, cause: ExitEvent['cause'], signalled: string | undefined, firstWasExit: boolean, audit: Recorder['record'], lastStderr: () => Promise<string | undefined>): Promise<number> {
  const grace = cause === 'client_eof' || cause === 'signal' || (cause === 'server_exit' && !firstWasExit);
  const { refusedCalls: _refusedCalls, ...counts } = session.stats;
  const exit = await stopLaunched(paths, id, launched, cause, counts, { grace, say, record: audit, ...(signalled ? { signal: signalled } : {}) });
  if (counts.nonJsonLines > 0) say(`the server wrote ${counts.nonJsonLines} non-JSON line(s) to stdout; none were forwarded.`);
  for (const module of exit.refusedModules) audit({ event: 'module_refused', server: id, pid: launched.pid, module });
  if (cause === 'server_exit') {
    // Requests the server will never answer now (its initialize among them, if it died first) get the reason.
    // Its last stderr line (relayed above, escaped) is quoted in the warden's report, never to the client.
    const guarded = exit.code === EXIT_REFUSED && launched.guard !== undefined;
    const last = guarded ? undefined : await lastStderr();
    session.fail('protocol_error', guarded
      ? `server '${id}' was ended by the warden's module guard: it tried to load a file outside its attested set, or one that changed after it was digested (the warden's stderr names it)`
      : `server '${id}' exited${exit.code === null ? '' : ` with code ${exit.code}`} before answering; ${last === undefined ? 'it wrote nothing to its stderr' : `the last line of its stderr: "${printable(last, 300)}"`}`, guarded ? { code: 'module_guard' } : { code: 'server_exited', exitCode: exit.code });
  }
  if (cause === 'inadmissible') return 5;
  if (cause === 'protocol_error' || cause === 'verification_failed' || cause === 'surface_refused') return 3;
  // A server that ended before its surface was reached (its initialize answered with the warden's error) is a
  // failed session whatever status it ended with: 0 from a server that quit at once is no success.
  if (cause === 'server_exit' && (exit.code !== 0 || !session.handshakeReleased)) return 3;
  return 0;
}

/** Runs one supervised session on this process's stdin and stdout; returns the exit code of `run`. The home is
 *  resolved here, inside the refusal path, so that even an invalid home is answered to the client in-band.
 *  `early`: what run-start.ts did first (the home and servers.json read, the server spawned behind its gate). */
export async function runSession(homeFlag: string | undefined, id: string, early: EarlyRun = {}): Promise<number> {
  let paths: HomePaths;
  let launched: Launched;
  let locks: ReturnType<typeof loadLocksOf> | undefined;
  let rec: Recorder | undefined;
  let denyWatch: DenyWatch | undefined;
  try {
    if (early.failed) {
      rec = await early.made;
      // Refused while resolving, judging or spawning: what dead wardens left is swept all the same, as it was when
      // the sweep came first. Its own refusal, if any, is said; the launch's is the one answered.
      if (early.paths && early.config) {
        try {
          await sweepAndAudit(early.paths, say);
        } catch (err) {
          if (!(err instanceof WardenError)) throw err;
          say(`${err.code}: ${err.message}`);
        }
      }
      throw early.failed.err;
    }
    if (early.paths) paths = early.paths;
    else {
      paths = resolveHome(homeFlag);
      openHome(paths, true);
      await settlePendingCommit(paths.home);
    }
    const config = early.config ?? loadServers(paths);
    rec = early.recorder ? await early.recorder() : recorder(paths, config.alerts, say);
    const prep = early.spawned?.prep ?? early.prepared;
    if (prep) {
      // Prepared, or spawned behind its gate, by run-start.ts: what came before the launch is done now (while
      // node starts), and a refusal found here kills a spawned server before its gate opens (completeLaunch).
      const before = async (): Promise<void> => {
        await sweepAndAudit(paths, say);
        locks = loadLocksOf(paths, id, true);
        try {
          prep.facts.sandbox = (await sandboxPinned(paths, id, prep.server, config, locks)).facts;
        } catch (err) {
          // Audited as a launch refusal, as when it was found before the spawn (completeLaunch audits its own).
          if (err instanceof WardenError && !early.spawned) return prep.refused(err, prep.facts);
          throw err;
        }
      };
      if (early.spawned) launched = await completeLaunch(early.spawned, before);
      else {
        try {
          await before();
        } catch (err) {
          prep.guard?.close();
          throw err;
        }
        launched = await completeLaunch(await spawnPrepared(prep));
      }
      denyWatch = watchDenied([]);
    } else {
      await sweepAndAudit(paths, say);
      locks = loadLocksOf(paths, id, Object.hasOwn(config.servers, id));
      // Watched from before the launch: a denied name replaced while bwrap mounts is caught too. Only the names the
      // hiding leaves on the host's side (a grant's name outside the hidden places, and those above it) are:
      // sandbox/deny-plan.ts.
      const sandbox = Object.hasOwn(config.servers, id) ? config.servers[id]?.sandbox : undefined;
      if (typeof sandbox === 'object') {
        const { dataDirOf, exposedDenyNames, sandboxUserHome } = await import('../sandbox/plan.js');
        denyWatch = watchDenied(exposedDenyNames(sandbox, { userHome: sandboxUserHome(), wardenHome: paths.home, dataDir: dataDirOf(paths.home, id) }));
      } else denyWatch = watchDenied([]);
      launched = await attestAndLaunch(paths, id, say, rec.record, { locks, config });
    }
  } catch (err) {
    denyWatch?.close();
    await rec?.flush();
    if (err instanceof WardenError) return refuse(id, err as LaunchRefusal);
    throw err;
  }
  const { child, plan, server } = launched;
  const lockSet = locks as ReturnType<typeof loadLocksOf>; // read in either branch above, or refused

  const audit = rec.record;
  // The relay is imported only now, while the server loads its code: it is not on the path to the launch.
  const { SESSION_DEFAULTS, Session } = await import('../proxy/session.js');

  // The server's stderr reaches the client's log line by line, escaped and named (ADR 0039), never raw.
  const lastStderr: { line?: string } = {};
  const relay = child.stderr.pipe(serverStderrRelay(id, lastStderr));
  relay.pipe(process.stderr, { end: false });
  child.stderr.once('error', () => relay.end());
  // What the server (or the module guard in it) wrote last to stderr must reach the client's log before `run`
  // exits: the end of the relay (its last line flushed) is awaited, within a bound (a descendant that kept the
  // pipe open is not waited for).
  const stderrDrained = new Promise<void>((resolve) => {
    relay.once('end', resolve);
    relay.once('close', resolve);
    relay.once('error', () => resolve());
  });
  // Before the session's own listener (same tick: nothing is emitted between): the module guard's report is read up
  // to where it is before each chunk of the server's output is judged, so a record written before a line the server
  // sent is kept even if the server cuts the file right after (src/launch/guard-report.ts).
  if (launched.guard) child.stdout.on('data', launched.guard.look);
  const session = new Session(
    { clientIn: process.stdin, clientOut: process.stdout, serverIn: child.stdin, serverOut: child.stdout },
    {
      ...SESSION_DEFAULTS,
      relistAfterCalls: server.relistEvery.calls,
      relistAfterMs: server.relistEvery.seconds * 1000,
      serverId: id,
      posture: server.posture,
      entry: lockSet.tools.get(id),
      extra: lockSet.warden.get(id),
      audit,
      report: say,
      atFirstLine: () => recheckPlan(plan).then(() => dropRecheckKeys(plan)),
      ...(server.rules ? { rules: sessionRules(server.rules, lockSet.warden.get(id)?.rules) } : {}),
      verifyWriter: launched.verifyWriter,
      clientSeen: (clientInfo) => setImmediate(() => {
        const problem = saveClientSeen(paths, id, clientInfo);
        if (problem) say(problem);
      }),
      ...(lockSet.warden.get(id)?.canaries ? { canaries: { probes: probesOf(server.canaries, defaultToolOf(lockSet.warden.get(id)?.canaries)), baselines: lockSet.warden.get(id)?.canaries ?? {}, policy: server.canaryLatency, samples: SESSION_CANARY_SAMPLES } } : {}),
    },
  );
  session.start();

  let signalled: string | undefined;
  const signalPromise = new Promise<'signal'>((resolve) => {
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
      process.once(sig, () => {
        signalled = sig;
        resolve('signal');
      });
    }
  });
  const replaced = (denyWatch as DenyWatch).replaced.then((p) => ({ replaced: p }));
  const first = await Promise.race([session.ended, launched.exited.then(() => 'exit' as const), signalPromise, replaced]);
  (denyWatch as DenyWatch).close();
  let cause: ExitEvent['cause'];
  if (first === 'signal') cause = 'signal';
  else if (typeof first === 'object' && 'replaced' in first) {
    cause = 'verification_failed';
    audit({ event: 'sandbox_deny_replaced', server: id, path: first.replaced });
    session.fail('verification_failed', `server '${id}': ${first.replaced} (or a directory above it), on the way to a read.deny path and a name of the host's, was replaced, created or removed on the host while the server ran, which moves the path's hiding inside the sandbox: the session was ended. Start it again to hide what is there now.`, { code: 'verification_failed', wardenCode: 'SANDBOX_UNAVAILABLE' });
  }
  else if (first === 'exit' || first.cause === 'server_eof') cause = 'server_exit';
  else cause = first.cause;
  await rec.flush();
  const drained = (): Promise<void> => Promise.race([stderrDrained, new Promise<void>((resolve) => setTimeout(resolve, STDERR_DRAIN_MS).unref())]);
  const code = await finish(paths, id, launched, session, cause, signalled, first === 'exit', audit, async () => (await drained(), lastStderr.line));
  // What is awaited from here on is bounded by unref'd timers: if nothing else keeps node's loop alive it may run
  // dry before `run` returns, and node would then exit 0 after a refused session. The status is set now.
  process.exitCode = code;
  await rec.flush();
  await drained();
  // A session that ended before the client's first request was read answers it when it comes (or waits for EOF).
  await session.owedAnswer();
  return code;
}
