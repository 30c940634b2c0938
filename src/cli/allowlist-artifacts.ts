import type { Artifact } from '../attest/plan.js';
import { appendAudit } from '../audit/log.js';
import { loadAllowlist, saveAllowlist, upsertEntry } from '../store/allowlist.js';
import type { HomePaths } from '../store/paths.js';

// Allowlisting what an enrollment trusted (the plan's artifacts, then the modules the server loaded from
// outside its package), one audit event per change.

/** Adds artifacts to allowlist.json, auditing each change (`by` says who). */
export async function allowlistArtifacts(paths: HomePaths, artifacts: Artifact[], by: string, say: (m: string) => void): Promise<void> {
  const allowlist = loadAllowlist(paths);
  const now = new Date().toISOString();
  for (const a of artifacts) {
    const change = upsertEntry(allowlist, { path: a.path, kind: a.kind, sha256: a.sha256, addedAt: now, note: `added by 'mcp-warden ${by}'` });
    if (change.action === 'unchanged') continue;
    const previousSha256 = change.action === 'replace' ? change.previous.sha256 : undefined;
    await appendAudit(paths.audit, { event: 'allowlist_changed', action: change.action, path: a.path, kind: a.kind, sha256: a.sha256, ...(previousSha256 ? { previousSha256 } : {}), by });
    if (previousSha256) say(`Replaced the allowlisted digest of ${a.path}: was ${previousSha256}`);
  }
  saveAllowlist(paths, allowlist);
}
