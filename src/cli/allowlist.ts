import { DigestCache } from '../attest/cache.js';
import { digestForAllowlist } from '../attest/allowlist-digest.js';
import { saveTreeListing } from '../store/tree-listings.js';
import { appendAudit } from '../audit/log.js';
import { WardenError } from '../error.js';
import { loadAllowlist, updateAllowlist, upsertEntry, type AllowlistEntry } from '../store/allowlist.js';
import { openHome } from '../store/home.js';
import { resolveHome } from '../store/paths.js';
import { escaped, line, printJson, printTable, shortSha } from './output.js';

export function allowlistList(homeFlag: string | undefined, json: boolean): number {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const { entries } = loadAllowlist(paths);
  if (json) printJson({ entries });
  else if (entries.length === 0) line(`The allowlist ${paths.allowlist} is empty.`);
  else printTable([['KIND', 'SHA256', 'ADDED', 'PATH'], ...entries.map((e) => [e.kind, shortSha(e.sha256), e.addedAt.slice(0, 10), e.path + (e.trustOnFirstUse ? '  (trust on first use)' : '')])]);
  return 0;
}

export async function allowlistAdd(homeFlag: string | undefined, target: string, note: string | undefined): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, true);
  loadAllowlist(paths); // an invalid or insecure allowlist is refused before anything is digested
  let kept: string | undefined;
  const d = await digestForAllowlist(target, undefined, (sha256, listing) => (kept = saveTreeListing(paths, sha256, listing)));
  if (kept) line(escaped(`Warning: ${kept}`));
  const change = await updateAllowlist(paths, (allowlist) => upsertEntry(allowlist, { ...d, addedAt: new Date().toISOString(), note: note ?? 'added by mcp-warden allowlist add' }));
  if (change.action === 'unchanged') {
    line(escaped(`${d.kind} ${d.path} is already allowlisted with sha256 ${d.sha256}.`));
    return 0;
  }
  const previousSha256 = change.action === 'replace' ? change.previous.sha256 : undefined;
  await appendAudit(paths.audit, { event: 'allowlist_changed', action: change.action, path: d.path, kind: d.kind, sha256: d.sha256, ...(previousSha256 ? { previousSha256 } : {}), by: 'allowlist add' });
  line(escaped(`${previousSha256 ? 'Replaced' : 'Added'} ${d.kind} ${d.path} sha256 ${d.sha256}${previousSha256 ? ` (was ${previousSha256})` : ''}.`));
  return 0;
}

export async function allowlistRemove(homeFlag: string | undefined, target: string): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const gone = await updateAllowlist(paths, (allowlist) => {
    const matching = allowlist.entries.filter((e) => e.path === target);
    if (matching.length === 0) {
      throw new WardenError('USAGE', `${target} is not in the allowlist ${paths.allowlist}; 'mcp-warden allowlist list' shows the exact paths.`);
    }
    allowlist.entries = allowlist.entries.filter((e) => e.path !== target);
    return matching;
  });
  for (const e of gone) {
    await appendAudit(paths.audit, { event: 'allowlist_changed', action: 'remove', path: e.path, kind: e.kind, sha256: e.sha256, by: 'allowlist remove' });
    line(escaped(`Removed ${e.kind} ${e.path}.`));
  }
  return 0;
}

/** Re-digests every entry; exit 1 if any changed or vanished. */
export async function allowlistVerify(homeFlag: string | undefined, json: boolean): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const cache = new DigestCache();
  const results = [];
  for (const e of loadAllowlist(paths).entries) results.push(await verifyEntry(e));
  async function verifyEntry(e: AllowlistEntry) {
    try {
      const d = await digestForAllowlist(e.path, cache);
      if (d.path !== e.path) return { ...e, state: 'moved' as const, actual: d.path };
      return d.sha256 === e.sha256 ? { ...e, state: 'ok' as const } : { ...e, state: 'changed' as const, actual: d.sha256 };
    } catch (err) {
      return { ...e, state: 'missing' as const, actual: (err as Error).message };
    }
  }
  const bad = results.filter((r) => r.state !== 'ok');
  if (json) printJson({ ok: bad.length === 0, entries: results });
  else {
    printTable([['STATE', 'KIND', 'PATH'], ...results.map((r) => [r.state, r.kind, r.path])]);
    for (const r of bad) line(escaped(`${r.path}: ${r.state === 'changed' ? `expected sha256 ${r.sha256}, got ${r.actual}` : r.actual}`));
  }
  return bad.length === 0 ? 0 : 1;
}
