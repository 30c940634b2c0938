import type { AuditEvent } from '../audit/events.js';
import { escaped } from '../escape.js';
import { checkRunDir } from '../launch/run-records.js';
import { openHome } from '../store/home.js';
import { resolveHome, type HomePaths } from '../store/paths.js';
import { loadServers, type ServersFile } from '../store/servers.js';
import { settlePendingCommit } from '../store/update.js';
import { prepareLaunch, type Prepared } from './launch-prepare.js';
import { spawnPrepared, type Spawned } from './launch-spawn.js';
import type { Recorder } from './recorder.js';

// The first part of `mcp-warden run <id>`: the server is spawned behind the module guard's gate as soon as what
// judging its interpreter needs is done (the home, servers.json, the allowlist, the executable's digest), and
// only then is the rest of `run`'s code imported (run-session.ts: the orphan sweep, the locks, the sandbox's
// pin, the script and package tree digested and judged, the relay), while node starts. The gate opens only once
// all of it passed; a refusal kills the server before any of its code ran (docs/adr/0056-launch-on-node-24.md,
// addendum "the spawn before the rest"). What this file imports is what the launch waits for: keep it small.

export const say = (msg: string): void => void process.stderr.write(`mcp-warden: ${escaped(msg)}\n`);

/** What the first part did, as far as it got: the home and servers.json read, the server spawned, or why not. */
export interface EarlyRun {
  paths?: HomePaths;
  config?: ServersFile;
  /** The recorder, made when the first event is recorded (its alert sinks are imported then). */
  recorder?: () => Promise<Recorder>;
  /** Whether it was made: a refusal's events are flushed before `run` answers the client. */
  made?: Promise<Recorder>;
  /** Prepared with its sandbox's pin still to check, and not spawned: a server that is not held at the gate. */
  prepared?: Prepared;
  /** Spawned behind the gate. Neither this nor `prepared`: the server takes the whole launch after the rest
   *  (a sandbox declared, an unknown id, an insecure run/). */
  spawned?: Spawned;
  /** What refused the launch here (answered by run-session.ts as any refusal). */
  failed?: { err: unknown };
}

/** Runs `run`: the early spawn here, the rest in run-session.ts. A refusal of either is answered there. */
export async function runStarting(homeFlag: string | undefined, id: string): Promise<number> {
  const early: EarlyRun = {};
  try {
    await startEarly(homeFlag, id, early);
  } catch (err) {
    early.failed = { err };
  }
  const { runSession } = await import('./run-session.js');
  return runSession(homeFlag, id, early);
}

async function startEarly(homeFlag: string | undefined, id: string, early: EarlyRun): Promise<void> {
  const paths = resolveHome(homeFlag);
  openHome(paths, true);
  await settlePendingCommit(paths.home);
  const config = loadServers(paths);
  early.paths = paths;
  early.config = config;
  early.recorder = () => (early.made ??= import('./recorder.js').then((m) => m.recorder(paths, config.alerts, say)));
  const server = Object.hasOwn(config.servers, id) ? config.servers[id] : undefined;
  // A confined server's sandbox is applied from its pin before anything is resolved: it takes the whole launch
  // after the rest, as before. So does an unknown id (refused there, with its message).
  if (!server || typeof server.sandbox === 'object') return;
  // An insecure run/ is the orphan sweep's to audit (run_record_refused) and refuse, before any launch.
  try {
    checkRunDir(paths.runDir);
  } catch {
    return;
  }
  const recorder = early.recorder;
  const record = async (e: AuditEvent): Promise<void> => (await recorder()).record(e);
  const prep = await prepareLaunch(paths, id, say, record, { config, pinAfterSpawn: true });
  // Only a server held at the gate (node running a script: its plan is completed after the spawn) is started
  // before the rest; any other would run its own code at once, before the locks and its sandbox's pin are read.
  if (prep.plan) early.prepared = prep;
  else early.spawned = await spawnPrepared(prep);
}
