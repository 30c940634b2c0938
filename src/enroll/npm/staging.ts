import fs from 'node:fs';
import path from 'node:path';
import type { LaunchPlan } from '../../attest/plan.js';
import type { AuditEvent } from '../../audit/events.js';
import { appendAudit } from '../../audit/log.js';
import { WardenError } from '../../error.js';
import { sandboxGrantProblem } from '../../sandbox/grant-policy.js';
import { writeJsonAtomic } from '../../store/atomic.js';
import { loadClientSeen, saveClientSeen } from '../../store/client-seen.js';
import { loadLocks, updateLocks, type Locks } from '../../store/locks.js';
import { resolveHome, type HomePaths } from '../../store/paths.js';
import { loadServers, type ServerConfig } from '../../store/servers.js';
import { checkSurface, type SurfaceCheck } from '../../supervise/surface-check.js';
import { recordReview } from '../../supervise/review.js';
import type { FindingCode } from '../../scan/rules.js';
import { lockAndBaseline, type Enrollment } from '../enrollment.js';
import { saveTreeListing } from '../../store/tree-listings.js';

// An upgrade is tried out of band before anything of the real home changes: in a staging home (a private
// directory in the real home's cache, which a confined launch there hides along with the real home) holding only
// this server, as it would be after the upgrade, with the artifacts of the new version allowlisted and the
// server's current lock entries copied in. There the new version is launched through the same attested path as
// `run`: its surface is diffed against the current lock (what `diff` shows), then locked and its canary baselines
// recorded. The staging home is removed afterwards, its audit events carried into the real log (marked staged);
// the real home is switched in one step only on confirmation (upgrade-switch.ts).

export interface Staged {
  paths: HomePaths;
  diff: SurfaceCheck;
  enrollment: Enrollment;
  /** The server entry as it stands in the staging home after locking (with the modules learnt). */
  server: ServerConfig;
  locks: Locks;
  /** The allowlist entries the staging home ended with (artifacts of the new version and learnt modules). */
  allowlist: unknown[];
}

/** The name of a staging home in the real home's cache: this, then mkdtemp's six characters. */
const STAGING_PREFIX = 'upgrade-staging-';

/** A staging home not written for this long was left by an upgrade that did not end (killed, crashed). */
export const STALE_STAGING_MS = 60 * 60 * 1000;

export async function stageUpgrade(real: HomePaths, id: string, server: ServerConfig, plan: LaunchPlan, say: (m: string) => void, accept: readonly FindingCode[] = []): Promise<Staged> {
  refuseGrantsInRealContext(real, id, server);
  // Inside the real home (its cache), never beside it: a confined launch hides the home it runs in, and the
  // staged one hides the real home whole, so the staging home with it (sandbox/launch.ts, `realHome`).
  fs.mkdirSync(real.cacheDir, { recursive: true, mode: 0o700 });
  const dir = fs.mkdtempSync(path.join(real.cacheDir, STAGING_PREFIX));
  const paths: HomePaths = { ...resolveHome(dir), realHome: real.home };
  try {
    fs.mkdirSync(paths.cacheDir, { mode: 0o700 });
    fs.mkdirSync(paths.runDir, { mode: 0o700 });
    const { modules: _, ...fresh } = server; // modules are learnt again from the new version
    writeJsonAtomic(paths.servers, { version: 1, path: loadServers(real).path, alerts: [], servers: { [id]: fresh } });
    const now = new Date().toISOString();
    // The new version's tree listing goes to the real home, where the switch allowlists that tree (filed under its
    // digest, a listing kept for an upgrade that is then abandoned names nothing wrongly).
    for (const a of plan.artifacts) {
      const failed = a.kind === 'package' && a.treeListing ? saveTreeListing(real, a.sha256, a.treeListing) : undefined;
      if (failed) say(`Warning: ${failed}`);
    }
    writeJsonAtomic(paths.allowlist, { version: 1, entries: plan.artifacts.map((a) => ({ path: a.path, kind: a.kind, sha256: a.sha256, addedAt: now })) });
    const seen = loadClientSeen(real, id);
    saveClientSeen(paths, id, new Map([['name', seen.name], ['version', seen.version]]));
    const current = loadLocks(real);
    await updateLocks(paths, (locks) => {
      const entry = current.tools.get(id);
      const extra = current.warden.get(id);
      if (entry) locks.tools.set(id, entry);
      if (extra) locks.warden.set(id, extra);
    });
    // What the upgrade shows is what it locks: the diff's launches record what they fetched, and the launch that
    // locks the new version must serve the same, part by part, or nothing is switched (docs/adr/0054).
    const diff = await checkSurface(paths, id, { review: true });
    if (diff.review) recordReview(paths, id, diff.review);
    // The new version's surface is scanned as a first trust (issue 30); accepted findings come from --accept-findings.
    const enrollment = await lockAndBaseline(paths, id, say, `upgrade ${id} (staged)`, accept, `mcp-warden upgrade ${id}`, {
      taken: 'nothing was switched',
      shown: `this upgrade showed of the new version`,
      again: `Nothing was changed; run 'mcp-warden upgrade ${id} --preview' to look at it again.`,
    });
    return {
      paths,
      diff,
      enrollment,
      server: loadServers(paths).servers[id] as ServerConfig,
      locks: loadLocks(paths),
      allowlist: (JSON.parse(fs.readFileSync(paths.allowlist, 'utf8')) as { entries: unknown[] }).entries,
    };
  } catch (err) {
    await discardStaging(paths, real);
    throw err;
  }
}

/** Refuses (SANDBOX_UNAVAILABLE) a sandbox whose grants the real home's policy refuses: the staging home holds only
 *  this server and no alert sinks, so its launch judges the grants without the other servers' sandboxes and the
 *  exec sinks' programs, which a grant of the new version must not reach either. */
function refuseGrantsInRealContext(real: HomePaths, id: string, server: ServerConfig): void {
  const file = loadServers(real);
  const sandboxes = Object.fromEntries(Object.entries(file.servers).map(([other, s]) => [other, other === id ? server.sandbox : s.sandbox]));
  const problem = sandboxGrantProblem(server.sandbox, { id, trustedPath: file.path, alerts: file.alerts, wardenHome: real.home, sandboxes });
  if (problem !== undefined) throw new WardenError('SANDBOX_UNAVAILABLE', `the sandbox of server '${id}' cannot be applied to its next version: ${problem}. Change it with: mcp-warden sandbox ${id} (see docs/guide.md, "Confining a server"). The new version was not launched and nothing was switched.`);
}

/** Removes the staging home, first carrying what happened there (the launches of the new version, their
 *  exits, its surface) into the real audit log, each event marked `"staged": true`. */
export async function discardStaging(paths: HomePaths, real: HomePaths): Promise<void> {
  try {
    const lines = fs.existsSync(paths.audit) ? fs.readFileSync(paths.audit, 'utf8').split('\n').filter(Boolean) : [];
    for (const text of lines) {
      const { ts: _ts, prev: _prev, ...event } = JSON.parse(text) as Record<string, unknown>;
      await appendAudit(real.audit, { ...event, staged: true } as unknown as AuditEvent);
    }
  } finally {
    fs.rmSync(paths.home, { recursive: true, force: true });
  }
}

/** When `dir` or an entry of it was last written (ms), or undefined when it is not a directory of the warden's uid. */
function lastWritten(dir: string): number | undefined {
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || (typeof process.getuid === 'function' && st.uid !== process.getuid())) return undefined;
  return Math.max(st.mtimeMs, ...fs.readdirSync(dir).map((n) => fs.lstatSync(path.join(dir, n)).mtimeMs));
}

/**
 * Sweeps the staging homes an upgrade that did not end left in the real home's cache: each not written for an
 * hour is discarded as an ended upgrade's is (its events carried into the real audit log, marked staged). Call
 * under the store lock: every upgrade holds it while its staging home exists, so none swept is in use.
 */
export async function sweepStaleStaging(real: HomePaths, say: (m: string) => void, now = Date.now()): Promise<void> {
  let names: string[];
  try {
    names = fs.readdirSync(real.cacheDir).filter((n) => n.startsWith(STAGING_PREFIX));
  } catch {
    return; // no cache yet
  }
  for (const name of names) {
    const dir = path.join(real.cacheDir, name);
    try {
      const written = lastWritten(dir);
      if (written === undefined || now - written < STALE_STAGING_MS) continue;
      await discardStaging({ ...resolveHome(dir), realHome: real.home }, real);
      say(`Removed ${dir}, the staging home of an upgrade that did not end (its events are in the audit log, marked staged).`);
    } catch (err) {
      say(`Warning: could not sweep ${dir}, the staging home of an upgrade that did not end: ${(err as Error).message}`);
    }
  }
}
