import fs from 'node:fs';
import { recheckPlan } from '../attest/recheck.js';
import { matchAllowlist, refusalReason } from '../attest/match.js';
import { planLaunch, type LaunchPlan } from '../attest/plan.js';
import { appendAudit } from '../audit/log.js';
import type { LaunchEvent } from '../audit/events.js';
import { WardenError } from '../error.js';
import { buildEnv } from '../launch/env.js';
import { DEFAULT_STOP, killGroupNow, stopGroup } from '../launch/kill.js';
import { startTimeOf } from '../launch/proc.js';
import { removeRunRecord, writeRunRecord } from '../launch/run-records.js';
import { spawnServer, verifyExecuted, type ServerProcess } from '../launch/spawn.js';
import { DEFAULT_RELAY_LIMITS, Relay } from '../proxy/relay.js';
import { answerRefusal } from '../proxy/refuse.js';
import { loadAllowlist } from '../store/allowlist.js';
import { loadDigestCache, saveDigestCache } from '../store/digest-cache-file.js';
import { openHome } from '../store/home.js';
import { resolveHome, type HomePaths } from '../store/paths.js';
import { loadServers, serverById } from '../store/servers.js';
import { artifactRecords, sweepAndAudit } from './common.js';

// `mcp-warden run <id>`: the whole supervised session, in the order it happens. The client launched us in
// place of the server; stdout belongs to the JSON-RPC stream, so every human message goes to stderr.

const say = (msg: string): void => void process.stderr.write(`mcp-warden: ${msg}\n`);

/** Refuses the session: audit, tell the client (its first request gets the error), exit 3. */
async function refuse(paths: HomePaths | undefined, id: string, err: WardenError, extra: Partial<LaunchEvent> = {}): Promise<number> {
  const message = `mcp-warden refused to launch server '${id}': ${err.message} Run 'mcp-warden status ${id}' for details.`;
  say(message);
  if (paths) {
    await appendAudit(paths.audit, { event: 'launch', server: id, decision: 'refuse', reason: err.message, code: err.code, ...extra }).catch((e: Error) =>
      say(`could not write the audit log: ${e.message}`),
    );
  }
  await answerRefusal(process.stdin, process.stdout, message, { code: err.code, server: id, hint: `mcp-warden status ${id}` });
  return 3;
}

/** Test seam: with MCP_WARDEN_TEST_HOLD_BEFORE_SPAWN=<fifo>, wait for a line on that FIFO before exec. */
function holdBeforeSpawn(): void {
  const fifo = process.env.MCP_WARDEN_TEST_HOLD_BEFORE_SPAWN;
  if (!fifo) return;
  const fd = fs.openSync(fifo, 'r');
  fs.readSync(fd, Buffer.alloc(1));
  fs.closeSync(fd);
}

async function attest(paths: HomePaths, id: string): Promise<{ plan: LaunchPlan; env: Record<string, string>; server: ReturnType<typeof serverById> }> {
  const config = loadServers(paths);
  const server = serverById(config, id, paths);
  const cache = loadDigestCache(paths);
  const plan = await planLaunch({ serverId: id, command: server.command, args: server.args, cwd: server.cwd, trustedPath: config.path }, cache);
  const cacheProblem = saveDigestCache(paths, cache);
  if (cacheProblem) say(cacheProblem);
  const verdict = matchAllowlist(plan.artifacts, loadAllowlist(paths).entries);
  const reason = refusalReason(verdict);
  if (reason) throw Object.assign(new WardenError(reason.code, `${reason.text}.`), { plan });
  const env = buildEnv({ trustedPath: config.path, env: server.env, passEnv: server.passEnv });
  return { plan, env, server };
}

export async function runVerb(homeFlag: string | undefined, id: string): Promise<number> {
  let paths: HomePaths | undefined;
  let attested: Awaited<ReturnType<typeof attest>>;
  try {
    paths = resolveHome(homeFlag);
    openHome(paths, true);
    await sweepAndAudit(paths, say);
    attested = await attest(paths, id);
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    const plan = (err as WardenError & { plan?: LaunchPlan }).plan;
    return refuse(paths, id, err, plan ? { resolvedPath: plan.file, artifacts: artifactRecords(plan) } : {});
  }
  const { plan, env, server } = attested;
  const launchFacts = {
    resolvedPath: plan.file,
    chain: plan.artifacts[0]?.chain ?? [],
    artifacts: artifactRecords(plan),
    argv: [plan.argv0, ...plan.args],
    envNames: Object.keys(env).sort(),
  };

  holdBeforeSpawn();
  let child: ServerProcess;
  try {
    child = await spawnServer({ file: plan.file, args: plan.args, argv0: plan.argv0, cwd: server.cwd, env });
  } catch (err) {
    if (err instanceof WardenError) return refuse(paths, id, err, launchFacts);
    throw err;
  }
  const pid = child.pid as number;
  const started = Date.now();
  writeRunRecord(paths.runDir, {
    serverId: id,
    pgid: pid,
    leaderStart: startTimeOf(pid) ?? '',
    supervisorPid: process.pid,
    supervisorStart: startTimeOf(process.pid) ?? '',
    startedAt: new Date(started).toISOString(),
  });
  const exitPromise = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );

  const exe = plan.artifacts[0];
  try {
    if (!exe?.key) throw new WardenError('EXEC_MISMATCH', 'no digested executable to verify against.');
    verifyExecuted(pid, exe.key, exe.path);
  } catch (err) {
    await killGroupNow(pid);
    removeRunRecord(paths.runDir, pid);
    if (err instanceof WardenError) return refuse(paths, id, err, { ...launchFacts, pid, pgid: pid });
    throw err;
  }
  await appendAudit(paths.audit, { event: 'launch', server: id, decision: 'allow', reason: 'all artifacts allowlisted', ...launchFacts, pid, pgid: pid });

  child.stderr.pipe(process.stderr, { end: false });
  const relay = new Relay(
    { clientIn: process.stdin, clientOut: process.stdout, serverIn: child.stdin, serverOut: child.stdout },
    DEFAULT_RELAY_LIMITS,
    { beforeFirstServerLine: async () => recheckPlan(plan), report: say },
  );
  relay.start();

  let signalled: string | undefined;
  const signalPromise = new Promise<'signal'>((resolve) => {
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
      process.once(sig, () => {
        signalled = sig;
        resolve('signal');
      });
    }
  });
  const first = await Promise.race([relay.ended, exitPromise.then(() => 'exit' as const), signalPromise]);

  let cause: 'client_eof' | 'server_exit' | 'signal' | 'protocol_error' | 'verification_failed';
  if (first === 'signal') cause = 'signal';
  else if (first === 'exit' || first.cause === 'server_eof') cause = 'server_exit';
  else cause = first.cause;
  // Grace: after stdin closes, the server may finish on its own; once it has exited, whatever it left in its
  // group gets SIGTERM at once. A session closed by the warden gets no grace.
  if (cause === 'client_eof' || cause === 'signal' || (first !== 'exit' && cause === 'server_exit')) {
    child.stdin.end();
    await Promise.race([exitPromise, new Promise((r) => setTimeout(r, DEFAULT_STOP.graceMs))]);
  }
  const stop = await stopGroup(pid, DEFAULT_STOP);
  const exit = await Promise.race([exitPromise, new Promise<{ code: null; signal: null }>((r) => setTimeout(() => r({ code: null, signal: null }), 1000))]);
  removeRunRecord(paths.runDir, pid);
  if (!stop.gone) say(`members of process group ${pid} survived SIGKILL; check 'ps -g ${pid}'.`);
  await appendAudit(paths.audit, {
    event: 'exit',
    server: id,
    pid,
    pgid: pid,
    cause,
    exitCode: exit.code,
    signal: exit.signal ?? signalled ?? null,
    stoppedBy: stop.by,
    groupGone: stop.gone,
    ...relay.stats,
    durationMs: Date.now() - started,
  });
  if (relay.stats.nonJsonLines > 0) say(`the server wrote ${relay.stats.nonJsonLines} non-JSON line(s) to stdout; none were forwarded.`);
  if (cause === 'protocol_error' || cause === 'verification_failed') return 3;
  if (cause === 'server_exit' && exit.code !== 0) return 3;
  return 0;
}
