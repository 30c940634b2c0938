import * as v from 'valibot';
import { ARTIFACT_KINDS } from '../attest/plan.js';
import { loadJsonFile } from './json-file.js';
import type { HomePaths } from './paths.js';
import { updateFile } from './update.js';


const entrySchema = v.strictObject({
  path: v.pipe(v.string(), v.check((p) => p.startsWith('/'), 'expected an absolute path')),
  kind: v.picklist(ARTIFACT_KINDS),
  sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex digits')),
  addedAt: v.pipe(v.string(), v.isoTimestamp('expected an ISO 8601 timestamp')),
  note: v.optional(v.string()),
  trustOnFirstUse: v.optional(v.boolean()),
  provenance: v.optional(v.unknown()),
});

export const allowlistFileSchema = v.strictObject({
  version: v.literal(1),
  entries: v.array(entrySchema),
});

export type AllowlistEntry = v.InferOutput<typeof entrySchema>;
export type AllowlistFile = v.InferOutput<typeof allowlistFileSchema>;

export function loadAllowlist(paths: HomePaths): AllowlistFile {
  return loadJsonFile(paths.allowlist, 'allowlist.json', allowlistFileSchema, true) ?? { version: 1, entries: [] };
}

export function renderAllowlist(file: AllowlistFile): string {
  const entries = [...file.entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return JSON.stringify({ version: 1, entries }, null, 2) + '\n';
}

/** Changes allowlist.json under its lock: read inside the lock, `apply` changes it in place, saved atomically
 *  if anything changed (store/update.ts). The only way the allowlist is written. */
export function updateAllowlist<R>(paths: HomePaths, apply: (file: AllowlistFile) => R | Promise<R>): Promise<R> {
  return updateFile(paths.allowlist, 'allowlist.json', () => loadAllowlist(paths), renderAllowlist, apply);
}

export type Upsert = { action: 'add' } | { action: 'replace'; previous: AllowlistEntry } | { action: 'unchanged'; previous: AllowlistEntry };

/**
 * Adds the entry for a path, or replaces one with another digest. An entry with the same digest is kept as it
 * is, with its original record of when and why it was added.
 */
export function upsertEntry(file: AllowlistFile, entry: AllowlistEntry): Upsert {
  const i = file.entries.findIndex((e) => e.path === entry.path && e.kind === entry.kind);
  const previous = file.entries[i];
  if (!previous) {
    file.entries.push(entry);
    return { action: 'add' };
  }
  if (previous.sha256 === entry.sha256) return { action: 'unchanged', previous };
  file.entries[i] = entry;
  return { action: 'replace', previous };
}
