import fs from 'node:fs';
import path from 'node:path';
import { refuseSecretArguments } from './secret-arguments.js';
import type { DigestCache } from '../attest/cache.js';
import { planLaunch, type Artifact, type LaunchPlan, type TreeMemo } from '../attest/plan.js';
import { WardenError } from '../error.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, newServerConfig, serverById, updateServers, type ServerConfig } from '../store/servers.js';
import type { LockEntry } from '../surface/lockfile.js';
import { recordCanaries } from '../supervise/canaries.js';
import { recordModules } from './outside-modules.js';
import { allowlistArtifacts } from './allowlist-artifacts.js';
import { captureLock } from '../supervise/capture-lock.js';
import type { ReviewWords } from '../supervise/review.js';
import type { FindingCode } from '../scan/rules.js';
import { newObserved } from '../sandbox/observe.js';
import { dropProposal, proposalFor, saveProposal, type NamedBy, type SandboxProposal } from '../sandbox/propose.js';

// Enrolling a server, shared by `add` and `import`: resolve and digest what it runs, allowlist that, write its
// servers.json entry, then launch it through the same in-band path as `run` to lock its surface and record
// its canary baselines.

export interface EnrollSpec {
  command: string;
  args: string[];
  cwd?: string;
  env: Record<string, string>;
  passEnv: string[];
  posture: 'enforce' | 'monitor';
  /** For a server installed into the sealed store: its package, provenance policy and pinned publisher, and
   *  the record put on its package tree's allowlist entry. */
  installed?: Pick<ServerConfig, 'package' | 'provenance' | 'identity'> & { treeProvenance: unknown };
}

export interface Enrollment {
  /** Files the server loaded from outside its package at enrollment, now allowlisted and recorded. */
  modules?: Artifact[];
  lock?: LockEntry;
  baselines?: number;
  /** Why the surface could not be locked (the server stays added). */
  lockError?: WardenError;
  /** The sandbox proposed from what the enrollment launches wrote (add, install, import), and its file. */
  proposal?: { proposal: SandboxProposal; file: string };
}

/** Resolves and digests what `spec` runs. The digest cache (and, for several servers, the tree memo) is the
 *  caller's: loaded once and saved once however many servers it plans. */
export async function planEnrollment(paths: HomePaths, id: string, spec: EnrollSpec, cache: DigestCache, memo?: TreeMemo): Promise<LaunchPlan> {
  refuseSecretArguments(id, spec.args);
  const plan = await planLaunch({ serverId: id, command: spec.command, args: spec.args, cwd: spec.cwd, trustedPath: loadServers(paths).path }, cache, memo);
  refuseHomeInTree(paths, id, plan);
  return plan;
}

/** A warden home inside a package tree it digests would change that tree with its own writes (audit log, locks),
 *  and every launch would then be refused as changed. */
function refuseHomeInTree(paths: HomePaths, id: string, plan: LaunchPlan): void {
  let home: string;
  try {
    home = fs.realpathSync(paths.home);
  } catch {
    home = path.resolve(paths.home); // not made yet: its would-be path
  }
  for (const a of plan.artifacts) {
    if (a.kind !== 'package') continue;
    const rel = path.relative(a.path, home);
    if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))) {
      throw new WardenError('HOME_IN_PACKAGE', `server '${id}': the warden home ${paths.home} is inside the package tree ${a.path} it would digest, so the warden's own writes would change that tree and every launch would be refused. Nothing was added. Use a home outside it (--home or MCP_WARDEN_HOME).`);
    }
  }
}

/** Allowlists the plan's artifacts and writes the server entry (`by` says who, in the audit log). */
export async function trustAndAdd(paths: HomePaths, id: string, spec: EnrollSpec, plan: LaunchPlan, by: string, say: (m: string) => void): Promise<void> {
  const tree = plan.artifacts.find((a) => a.kind === 'package');
  await allowlistArtifacts(paths, plan.artifacts, by, say, spec.installed && tree ? { path: tree.path, record: spec.installed.treeProvenance } : undefined);
  const { treeProvenance: _, ...installed } = spec.installed ?? { treeProvenance: undefined };
  const entry = newServerConfig({ command: spec.command, args: spec.args, env: spec.env, passEnv: spec.passEnv, posture: spec.posture, ...(spec.cwd ? { cwd: spec.cwd } : {}), ...installed });
  await updateServers(paths, (config) => {
    if (Object.hasOwn(config.servers, id)) {
      throw new WardenError('SERVER_EXISTS', `server '${id}' was added to ${paths.servers} by another command meanwhile; it was left as it is. Choose another id, or edit that entry by hand.`);
    }
    config.servers[id] = entry;
  });
}

/** Records the modules a node server loads from outside its package, locks the surface and records canary
 *  baselines; a failure is returned, not thrown. `observe`: the launches are observed for a sandbox proposal, and
 *  who named the server's configuration (sandbox/propose.ts). */
export async function lockAndBaseline(paths: HomePaths, id: string, say: (m: string) => void = () => {}, by = `enroll ${id}`, accept: readonly FindingCode[] = [], retry?: string, review?: ReviewWords, observe: false | NamedBy = false): Promise<Enrollment> {
  try {
    let modules: Artifact[] = [];
    let baselines = 0;
    // The launches of an enrollment are observed: what they write is redirected and listed (docs/adr/0063).
    const seen = observe ? newObserved() : undefined;
    // The baselines are recorded on the lock's last launch, once the lock is written (docs/adr/0061).
    const lock = await captureLock(paths, id, 'lock', async (learned) => {
      modules = await recordModules(paths, id, learned, by, say, seen?.dirs);
    }, accept, retry, review, async (held) => {
      baselines = Object.keys(await recordCanaries(paths, id, held)).length;
    }, seen);
    if (!seen) return { modules, lock, baselines };
    const server = serverById(loadServers(paths), id, paths);
    const proposal = proposalFor(paths, id, server, seen, process.env.HOME, seen.code, observe || 'operator');
    // Nothing observed: no proposal to keep, only the line that says why.
    if (seen.dirs.length === 0) dropProposal(paths, id);
    return { modules, lock, baselines, proposal: { proposal, file: seen.dirs.length > 0 ? saveProposal(paths, proposal) : '' } };
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    return { lockError: err };
  }
}
