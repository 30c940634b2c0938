import fs from 'node:fs';
import path from 'node:path';
import { sameInode, statKey } from '../attest/stat-key.js';
import type { LaunchPlan } from '../attest/plan.js';
import type { LaunchEvent } from '../audit/events.js';
import { WardenError } from '../error.js';
import { INSTALL_ROOT, PRELOAD_DIR } from '../launch/module-guard.js';
import { liveProcesses } from '../launch/proc.js';
import type { HomePaths } from '../store/paths.js';
import type { ServerConfig, ServersFile } from '../store/servers.js';
import type { WardenLockEntry } from '../surface/warden-lock.js';
import { placeDecoys, secretPaths, type Decoys } from './decoys.js';
import { findEngine, findNsenter, findTool, type Engine } from './engine.js';
import { sandboxPin } from './pin.js';
import { bwrapArgs, ensureDataDir, sandboxUserHome, type SandboxMounts } from './plan.js';
import { parseDomainGrant, type Confinement, type DomainGrant } from './schema.js';

// The sandbox at launch (docs/adr/0050-sandbox-engine.md): a server whose entry declares one is started only
// inside it, and only when it is the one pinned in warden.lock; never unconfined for want of an engine. The
// warden starts bwrap, which forks the server inside new namespaces: the process the warden checks (the
// executed inode, the holders of stdout) is that grandchild, and bwrap's own two processes, which hold the
// server's stdio too, are known by pid and by their executable.

export interface SandboxLaunch {
  confinement: Confinement;
  hash: string;
  engine: Engine;
  /** A sandbox with network domains: nsenter, and what its proxy admits (sandbox/egress.ts). */
  egress?: { nsenter: Engine; grants: DomainGrant[] };
  /** bpftrace on the trusted path, which sees the session's denied writes (sandbox/write-trace.ts), if any. */
  tracer?: Engine;
  /** servers.json's "writeTracing": "off": the session's denied writes are not traced, on purpose. */
  tracingOff?: true;
}

/** What the audit log records of a launch's sandbox. */
export type SandboxFacts = NonNullable<LaunchEvent['sandbox']>;

/**
 * The sandbox a launch of `id` must apply, or undefined (no sandbox, or an explicit "unconfined"), judged
 * against `extra`, the server's warden.lock entry. Refuses a sandbox that is not the pinned one
 * (SANDBOX_NOT_PINNED, also a removed or added one) and a missing engine, or nsenter for network domains
 * (SANDBOX_ENGINE_MISSING).
 */
export function sandboxForLaunch(paths: HomePaths, id: string, server: ServerConfig, config: ServersFile, extra: WardenLockEntry | undefined): { launch?: SandboxLaunch; facts: SandboxFacts } {
  const pin = sandboxPin(server, extra);
  if (pin.state === 'added' && !extra) {
    throw new WardenError('SANDBOX_NOT_PINNED', `server '${id}' has a sandbox in ${paths.servers} but is not locked yet, so the sandbox was never pinned and the warden does not launch it. Remove the sandbox from servers.json, lock the server (mcp-warden lock ${id}), then set it with: mcp-warden sandbox ${id} --network none ...`);
  }
  if (pin.state !== 'none' && pin.state !== 'pinned') {
    const what = { added: 'has a sandbox that was never pinned', removed: 'has no sandbox, but warden.lock pins one', changed: 'has another sandbox than the one pinned in warden.lock' }[pin.state];
    throw new WardenError('SANDBOX_NOT_PINNED', `server '${id}' ${what} (changed in ${paths.servers} outside 'mcp-warden sandbox'), so the warden does not launch it. Review it with: mcp-warden sandbox ${id}; then set it through the CLI (mcp-warden sandbox ${id} --pin), which pins and audits it.`);
  }
  const sandbox = server.sandbox;
  if (sandbox === undefined) return { facts: { state: 'none' } };
  if (sandbox === 'unconfined') return { facts: { state: 'unconfined' } };
  // The engine is never taken from where another server may write; this server's own grants that reach the
  // trusted path refuse its launch before bwrap runs (sandbox/plan.ts), with their own reason.
  const lookup = { path: config.path, sandboxes: Object.fromEntries(Object.entries(config.servers).map(([other, s]) => [other, s.sandbox])), self: id };
  const engine = findEngine(lookup, id);
  // Judged like the engine: root- or warden-owned, on the trusted path; not looked for when servers.json says off.
  const tracer = config.writeTracing === 'off' ? undefined : findTool('bpftrace', lookup);
  const facts: SandboxFacts = { state: 'confined', network: typeof sandbox.network === 'object' ? 'domains' : sandbox.network, hash: pin.now as string, engine: engine.file };
  const traced = config.writeTracing === 'off' ? { tracingOff: true as const } : tracer ? { tracer } : {};
  if (typeof sandbox.network === 'object') {
    const grants = sandbox.network.domains.map((d) => parseDomainGrant(d) as DomainGrant); // the schema admitted each
    return { launch: { confinement: sandbox, hash: pin.now as string, engine, egress: { nsenter: findNsenter(lookup, id), grants }, ...traced }, facts: { ...facts, domains: sandbox.network.domains } };
  }
  return { launch: { confinement: sandbox, hash: pin.now as string, engine, ...traced }, facts };
}

/** The attested paths of a plan, and the module guard's directory: read-only inside the sandbox. A package tree
 *  brings the directory of every package its digest covered (its dependencies may be hoisted to a node_modules
 *  directory above it, where the sandbox hides: a checkout under the home or /tmp), and a module loaded from
 *  outside the package its package's directory (node reads that package.json to resolve and type the file).
 *  What they hold is the server's own code, never a grant to write. */
function ownFiles(plan: LaunchPlan): string[] {
  const dirs = [
    ...plan.artifacts.flatMap((a) => [a.path, ...a.chain]),
    ...plan.artifacts.flatMap((a) => (a.kind === 'package' ? (a.treeDirs ?? []).filter(isPackageDir) : [])),
    ...plan.artifacts.filter((a) => a.kind === 'module').flatMap((a) => packageRoot(a.path) ?? []),
    PRELOAD_DIR.replace(/\/$/, ''),
  ];
  // A directory inside another one bound already needs no mount of its own.
  const unique = [...new Set(dirs)].sort();
  return unique.filter((d, i) => !unique.slice(0, i).some((o) => d.startsWith(`${o}${path.sep}`) && fs.statSync(o, { throwIfNoEntry: false })?.isDirectory()));
}

/** A directory that is a package of a node_modules directory (`node_modules/name` or `node_modules/@scope/name`). */
function isPackageDir(dir: string): boolean {
  const parent = path.dirname(dir);
  return path.basename(parent) === 'node_modules' || (path.basename(parent).startsWith('@') && path.basename(path.dirname(parent)) === 'node_modules');
}

/** The nearest directory above `file` with a package.json, inside a node_modules directory, or undefined. */
function packageRoot(file: string): string | undefined {
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (!dir.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
  }
  return undefined;
}

/** What the warden runs, which no write grant may reach: its install, the node running it, the engines. */
function wardenFiles(s: SandboxLaunch): string[] {
  return [INSTALL_ROOT, fs.realpathSync(process.execPath), s.engine.file, ...(s.egress ? [s.egress.nsenter.file] : [])];
}

/** bwrap's arguments (before `--` and the server's command line) and the grants' descriptors, with the data
 *  directory created, and the session's decoys (sandbox/decoys.ts) when they can be placed: the caller watches
 *  them from the launch on, or discards them. `config` is servers.json: its trusted path and every server's
 *  sandbox bound the grants. */
export function sandboxArgs(paths: HomePaths, id: string, s: SandboxLaunch, plan: LaunchPlan, cwd: string | undefined, config: ServersFile): SandboxMounts & { decoys?: Decoys; secrets?: string[] } {
  const dataDir = ensureDataDir(paths.home, id);
  const userHome = sandboxUserHome();
  const sandboxes = Object.fromEntries(Object.entries(config.servers).map(([other, server]) => [other, server.sandbox]));
  // A staging home lies inside the real home: hiding the real one hides both (review 15, finding 2).
  const wardenHome = paths.realHome ?? paths.home;
  const scope = { id, trustedPath: config.path, alerts: config.alerts, wardenHome, sandboxes };
  const own = ownFiles(plan);
  const kept = [...s.confinement.write, ...s.confinement.read.allow, dataDir, wardenHome, ...own];
  const decoys = placeDecoys(paths.home, userHome, kept);
  // No decoys (a warden that is not root): a node server's guard may report its reads of those paths instead.
  const secrets = decoys ? [] : secretPaths(userHome, kept);
  try {
    return { ...bwrapArgs(s.confinement, { id, userHome, wardenHome, dataDir, ownFiles: own, wardenFiles: wardenFiles(s), cwd, scope, ...(decoys ? { decoyArgs: decoys.args } : {}) }), ...(decoys ? { decoys } : {}), ...(secrets.length > 0 ? { secrets } : {}) };
  } catch (err) {
    decoys?.discard();
    throw err;
  }
}

/** How long bwrap may take to set the sandbox up and exec the server. */
const START_MS = 10_000;

/**
 * The server's pid inside the sandbox started as `bwrapPid`: bwrap forks its init (pid 1 of the new pid
 * namespace), which forks the server. Found once the server has exec'd (its exe is no longer bwrap). Refuses
 * with SANDBOX_UNAVAILABLE when bwrap exits first (it could not apply the sandbox: its stderr says why).
 */
export async function sandboxedServer(bwrapPid: number, engine: Engine, alive: () => boolean): Promise<{ server: number; enginePids: number[] }> {
  const deadline = Date.now() + START_MS;
  for (;;) {
    const procs = liveProcesses();
    const init = procs.find((p) => p.ppid === bwrapPid);
    const child = init && procs.find((p) => p.ppid === init.pid);
    if (init && child) {
      let exe;
      try {
        exe = statKey(fs.statSync(`/proc/${child.pid}/exe`, { bigint: true }));
      } catch {
        exe = undefined;
      }
      if (exe && !sameInode(exe, engine.key)) return { server: child.pid, enginePids: [bwrapPid, init.pid] };
    }
    if (!alive()) throw new WardenError('SANDBOX_UNAVAILABLE', `bubblewrap (${engine.file}) exited before it started the server: it could not apply the sandbox on this host (its message is in the server's stderr). Where user namespaces are disabled, an unprivileged warden cannot confine; see docs/guide.md, "Confining a server".`);
    if (Date.now() > deadline) throw new WardenError('SANDBOX_UNAVAILABLE', `bubblewrap (${engine.file}) did not start the server within ${START_MS / 1000} s.`);
    await new Promise((r) => setTimeout(r, 2));
  }
}
