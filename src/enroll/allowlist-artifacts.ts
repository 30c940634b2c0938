import type { Artifact } from '../attest/plan.js';
import { appendAudit } from '../audit/log.js';
import { updateAllowlist, upsertEntry } from '../store/allowlist.js';
import type { HomePaths } from '../store/paths.js';
import { saveTreeListing } from '../store/tree-listings.js';

// Allowlisting what an enrollment trusted (the plan's artifacts, then the modules the server loaded from
// outside its package), one audit event per change. A package installed from the registry carries what its
// provenance said (who built which tarball) on its tree's entry. allowlist.json is read-modify-written under its lock
// (store/update.ts): a concurrent add or import never loses this update, nor this one theirs.

/** Adds artifacts to allowlist.json, auditing each change (`by` says who). */
export async function allowlistArtifacts(paths: HomePaths, artifacts: Artifact[], by: string, say: (m: string) => void, provenance?: { path: string; record: unknown }): Promise<void> {
  const now = new Date().toISOString();
  const changes = await updateAllowlist(paths, (allowlist) =>
    artifacts.map((a) => {
      const extra = provenance && provenance.path === a.path ? { provenance: provenance.record } : {};
      return { a, change: upsertEntry(allowlist, { path: a.path, kind: a.kind, sha256: a.sha256, addedAt: now, note: `added by 'mcp-warden ${by}'`, ...extra }) };
    }),
  );
  for (const { a, change } of changes) {
    if (change.action === 'unchanged') continue;
    const previousSha256 = change.action === 'replace' ? change.previous.sha256 : undefined;
    await appendAudit(paths.audit, { event: 'allowlist_changed', action: change.action, path: a.path, kind: a.kind, sha256: a.sha256, ...(previousSha256 ? { previousSha256 } : {}), by });
    if (previousSha256) say(`Replaced the allowlisted digest of ${a.path}: was ${previousSha256}`);
  }
  // A package tree's file list, for a refusal of it as changed to name the files (store/tree-listings.ts).
  for (const a of artifacts) {
    const failed = a.kind === 'package' && a.treeListing ? saveTreeListing(paths, a.sha256, a.treeListing) : undefined;
    if (failed) say(`Warning: ${failed}`);
  }
}
