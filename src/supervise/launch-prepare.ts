import { matchAllowlist, refusalReason } from '../attest/match.js';
import { completePlan, resolveLaunch, type Artifact, type CommandSpec, type LaunchPlan, type ResolvedLaunch } from '../attest/plan.js';
import type { DigestCache } from '../attest/cache.js';
import { isOwnNode, refuseIfPreloaded } from '../attest/self.js';
import type { ArtifactRecord, AuditEvent, LaunchEvent } from '../audit/events.js';
import { WardenError } from '../error.js';
import { buildEnv } from '../launch/env.js';
import { MARKER_ENV, newMarker } from '../launch/marker.js';
import { prepareModuleGuard, type ModuleGuard } from '../launch/module-guard.js';
import { loadsRequiredEsmUnguarded, nodeRelease } from '../launch/node-release.js';
import { checkRunDir } from '../launch/run-records.js';
import { loadAllowlist } from '../store/allowlist.js';
import { loadDigestCache, saveDigestCache } from '../store/digest-cache-file.js';
import type { Locks } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, serverById, type ServerConfig, type ServersFile } from '../store/servers.js';
import type { SandboxLaunch } from '../sandbox/launch.js';
import type { SandboxMounts } from '../sandbox/plan.js';
import type { Decoys } from '../sandbox/decoys.js';
import type { Observed, ObservedLaunch } from '../sandbox/observe.js';
import type { EarlyObservation } from '../sandbox/write-observe.js';
import { recordNodeRelease, recordedNodeRelease } from '../store/node-releases.js';
import { packageChangeText } from './tree-change.js';

// The attested launch up to the spawn (docs/adr/0019-fast-launch.md): resolve and digest what judging the
// command needs, match the allowlist, build the environment and the module guard, and say how to start it.
// A node server behind the guard's gate needs only its interpreter judged here: its script, package tree and
// modules are digested while node starts (attested-launch.ts, completeLaunch). Every refusal is audited here
// and thrown as a WardenError carrying the facts gathered so far. The sandbox's code is imported only for a
// server that declares one (or an enrollment launch that is observed): `run` of any other imports less before
// its server is spawned (docs/adr/0056-launch-on-node-24.md, addendum "the spawn before the rest").

export type LaunchRefusal = WardenError & { facts?: Partial<LaunchEvent> };

/** Records the launch's events: its decision, and what a sandbox's proxy refused while it runs. */
export type RecordLaunch = (e: AuditEvent) => unknown;

export interface LaunchOptions {
  /** The enrollment launch; the module guard records what is loaded outside the set instead of refusing it. */
  learnModules?: boolean;
  /** The locks as the caller read them (`run`), else read here for the sandbox's pin. */
  locks?: Locks;
  observe?: Observed;
  /** servers.json as the caller read it (`run`), else read here. */
  config?: ServersFile;
  /** `run`'s early spawn: for a server that declares no sandbox, its pin in warden.lock (none, or refused as
   *  SANDBOX_NOT_PINNED) is checked after the spawn and before the gate opens (completeLaunch's `beforeGate`). */
  pinAfterSpawn?: boolean;
}

export interface Prepared {
  paths: HomePaths;
  id: string;
  config: ServersFile;
  server: ServerConfig;
  spec: CommandSpec;
  cache: DigestCache;
  resolved: ResolvedLaunch;
  /** Complete before the spawn, except for a node script behind the gate (completed while node starts). */
  plan: LaunchPlan | undefined;
  env: Record<string, string>;
  marker: string;
  facts: Partial<LaunchEvent>;
  guard: ModuleGuard | undefined;
  args: string[];
  sandbox: { launch?: SandboxLaunch; facts: LaunchEvent['sandbox'] } | undefined;
  /** bwrap's arguments for a confined server, its grants' descriptors, its decoys. */
  confine: (SandboxMounts & { decoys?: Decoys; secrets?: string[] }) | undefined;
  observed: ObservedLaunch | undefined;
  judge: (artifacts: Artifact[]) => WardenError | undefined;
  refused: (err: WardenError, facts: Partial<LaunchEvent>) => Promise<never>;
  say: (m: string) => void;
  record: RecordLaunch;
  /** A confined launch's cgroup, recorder and tracer of denied writes, started with the sandbox known. */
  early: EarlyObservation | undefined;
}

/** Everything before the spawn; refusals are audited and thrown. */
export async function prepareLaunch(paths: HomePaths, id: string, say: (m: string) => void, record: RecordLaunch, opts: LaunchOptions = {}): Promise<Prepared> {
  let watching: EarlyObservation | undefined;
  const refused = async (err: WardenError, facts: Partial<LaunchEvent>): Promise<never> => {
    await watching?.discard();
    await record({ event: 'launch', server: id, decision: 'refuse', reason: err.message, code: err.code, ...facts });
    throw Object.assign(err, { facts });
  };
  try {
    refuseIfPreloaded();
  } catch (err) {
    if (err instanceof WardenError) return refused(err, {});
    throw err;
  }
  const config = opts.config ?? loadServers(paths);
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
  // A server with a sandbox object is confined: its pin and its engine are known before anything is resolved.
  const declared = typeof server.sandbox === 'object' || opts.observe !== undefined;
  let resolved: ResolvedLaunch;
  let plan: LaunchPlan | undefined;
  let sandbox: Prepared['sandbox'];
  try {
    // A declared sandbox is applied or the launch refused, before anything is resolved (sandbox/launch.ts).
    if (declared || !opts.pinAfterSpawn) sandbox = await sandboxPinned(paths, id, server, config, opts.locks);
    // Its tracer of denied writes compiles and attaches while the files are digested (docs/adr/0066).
    if (sandbox?.launch) watching = await (await import('../sandbox/write-observe.js')).observeEarly({ id, tracer: sandbox.launch.tracer, ...(sandbox.launch.tracingOff ? { off: true as const } : {}), record, say });
    resolved = await resolveLaunch(spec, cache);
    // node running a script starts behind the module guard's gate as soon as the interpreter is judged; its
    // script, package tree and modules are digested while node starts, and judged before the gate opens
    // (docs/adr/0019-fast-launch.md). Anything else starts only once all of it is judged, and so does a "#!"
    // script whose line gives node an option that may load code (it would run before the preload).
    // A confined server's files are known before it starts: they are mounted read-only in its sandbox.
    if (!resolved.gated || sandbox?.launch) plan = await completePlan(resolved, spec, cache);
  } catch (err) {
    if (err instanceof WardenError) return refused(err, {});
    throw err;
  }
  const egress = sandbox?.launch?.egress !== undefined;
  const proxied = egress ? (await import('../sandbox/egress.js')).proxyEnv() : {};
  // The session marker goes last, so no configured value can replace it (docs/adr/0013).
  const marker = newMarker();
  const env = { ...buildEnv({ trustedPath: config.path, env: server.env, passEnv: server.passEnv }), ...proxied, [MARKER_ENV]: marker };
  const facts: Partial<LaunchEvent> = {
    resolvedPath: resolved.file,
    chain: resolved.executable.chain,
    artifacts: plan ? artifactRecords(plan) : artifactRecords({ artifacts: [resolved.executable, ...resolved.libraries] }),
    argv: [resolved.argv0, ...resolved.args],
    envNames: Object.keys(env).sort(),
    // Until its pin is checked after the spawn: what servers.json says, which that check confirms or refuses.
    sandbox: sandbox?.facts ?? { state: server.sandbox === 'unconfined' ? 'unconfined' : 'none' },
  };
  const early = judge(plan?.artifacts ?? [resolved.executable, ...resolved.libraries]);
  if (early) {
    if (plan) saveCache(paths, id, cache, say);
    return refused(early, facts);
  }

  let confine: Prepared['confine']; // bwrap's arguments for a confined server, its grants' descriptors, its decoys
  try {
    checkRunDir(paths.runDir); // the record written below must be one no other user can plant or replace
    if (sandbox?.launch) confine = (await import('../sandbox/launch.js')).sandboxArgs(paths, id, sandbox.launch, plan as LaunchPlan, server.cwd, config);
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
  // An enrollment launch (no sandbox declared yet) runs with its writes redirected and listed (docs/adr/0063).
  let observed: ObservedLaunch | undefined;
  if (opts.observe && !sandbox?.launch?.engine) {
    const { observeLaunch } = await import('../sandbox/observe.js');
    const { observeContext } = await import('../sandbox/observe-context.js');
    observed = observeLaunch(observeContext(paths, { path: config.path, sandboxes: Object.fromEntries(Object.entries(config.servers).map(([other, s]) => [other, s.sandbox])) }, env, server, resolved), resolved.file, args, opts.observe);
  }
  return { paths, id, config, server, spec, cache, resolved, plan, env, marker, facts, guard, args, sandbox, confine, observed, judge, refused, say, record, early: watching };
}

/** The server's sandbox as servers.json declares it and warden.lock pins it (sandbox/launch.ts); refused
 *  (SANDBOX_NOT_PINNED) when the two differ. */
export async function sandboxPinned(paths: HomePaths, id: string, server: ServerConfig, config: ServersFile, locks: Locks | undefined): Promise<NonNullable<Prepared['sandbox']>> {
  const [{ sandboxForLaunch }, lockEntry] = await Promise.all([import('../sandbox/launch.js'), locks ? undefined : import('../store/lock-entry-cache.js')]);
  return sandboxForLaunch(paths, id, server, config, (locks ?? (lockEntry as typeof import('../store/lock-entry-cache.js')).loadLocksOf(paths, id, true)).warden.get(id));
}

/** The digest cache is saved whatever the verdict: the next launch of an unchanged tree reads no file again. */
export function saveCache(paths: HomePaths, id: string, cache: DigestCache, say: (m: string) => void): void {
  const problem = saveDigestCache(paths, id, cache);
  if (problem) say(problem);
}

/** The artifacts of a plan as the audit log records them. */
export function artifactRecords(plan: Pick<LaunchPlan, 'artifacts'>): ArtifactRecord[] {
  return plan.artifacts.map((a) => ({ kind: a.kind, path: a.path, sha256: a.sha256, chain: a.chain }));
}
