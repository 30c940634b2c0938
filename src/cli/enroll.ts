import type { DigestCache } from '../attest/cache.js';
import { planLaunch, type Artifact, type LaunchPlan, type TreeMemo } from '../attest/plan.js';
import { appendAudit } from '../audit/log.js';
import { WardenError } from '../error.js';
import { updateAllowlist, upsertEntry } from '../store/allowlist.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, newServerConfig, updateServers } from '../store/servers.js';
import type { LockEntry } from '../surface/lockfile.js';
import { recordCanaries } from './canary.js';
import { captureLock } from './lock.js';

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
}

export interface Enrollment {
  lock?: LockEntry;
  baselines?: number;
  /** Why the surface could not be locked (the server stays added). */
  lockError?: WardenError;
}

/** Resolves and digests what `spec` runs. The digest cache (and, for several servers, the tree memo) is the
 *  caller's: loaded once and saved once however many servers it plans. */
export function planEnrollment(paths: HomePaths, id: string, spec: EnrollSpec, cache: DigestCache, memo?: TreeMemo): Promise<LaunchPlan> {
  return planLaunch({ serverId: id, command: spec.command, args: spec.args, cwd: spec.cwd, trustedPath: loadServers(paths).path }, cache, memo);
}

export function describeArtifact(a: Artifact): string {
  const extra = a.kind === 'package' ? ` (${a.packages} packages, ${a.files} files)` : '';
  const via = a.chain.length > 1 ? `\n      via ${a.chain.join(' -> ')}` : '';
  return `  ${a.kind.padEnd(10)} ${a.path}${extra}\n      sha256 ${a.sha256}${via}`;
}

/** Allowlists the plan's artifacts and writes the server entry (`by` says who, in the audit log). */
export async function trustAndAdd(paths: HomePaths, id: string, spec: EnrollSpec, plan: LaunchPlan, by: string, say: (m: string) => void): Promise<void> {
  const now = new Date().toISOString();
  // Both files are read-modify-written under their locks (store/update.ts): a concurrent add or import
  // never loses this update, nor this one theirs.
  const changes = await updateAllowlist(paths, (allowlist) =>
    plan.artifacts.map((a) => ({ a, change: upsertEntry(allowlist, { path: a.path, kind: a.kind, sha256: a.sha256, addedAt: now, note: `added by 'mcp-warden ${by}'` }) })),
  );
  for (const { a, change } of changes) {
    if (change.action === 'unchanged') continue;
    const previousSha256 = change.action === 'replace' ? change.previous.sha256 : undefined;
    await appendAudit(paths.audit, { event: 'allowlist_changed', action: change.action, path: a.path, kind: a.kind, sha256: a.sha256, ...(previousSha256 ? { previousSha256 } : {}), by });
    if (previousSha256) say(`Replaced the allowlisted digest of ${a.path}: was ${previousSha256}`);
  }
  const entry = newServerConfig({ command: spec.command, args: spec.args, env: spec.env, passEnv: spec.passEnv, posture: spec.posture, ...(spec.cwd ? { cwd: spec.cwd } : {}) });
  await updateServers(paths, (config) => {
    if (Object.hasOwn(config.servers, id)) {
      throw new WardenError('SERVER_EXISTS', `server '${id}' was added to ${paths.servers} by another command meanwhile; it was left as it is. Choose another id, or edit that entry by hand.`);
    }
    config.servers[id] = entry;
  });
}

/** Locks the surface and records canary baselines; a failure is returned, not thrown. */
export async function lockAndBaseline(paths: HomePaths, id: string): Promise<Enrollment> {
  try {
    const lock = await captureLock(paths, id, 'lock');
    const baselines = Object.keys(await recordCanaries(paths, id)).length;
    return { lock, baselines };
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    return { lockError: err };
  }
}
