import { z } from 'zod';
import { ARTIFACT_KINDS } from '../attest/plan.js';
import { writeJsonAtomic } from './atomic.js';
import { loadJsonFile } from './json-file.js';
import type { HomePaths } from './paths.js';


const entrySchema = z.strictObject({
  path: z.string().refine((p) => p.startsWith('/'), 'expected an absolute path'),
  kind: z.enum(ARTIFACT_KINDS),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex digits'),
  addedAt: z.string().datetime({ offset: true }),
  note: z.string().optional(),
  trustOnFirstUse: z.boolean().optional(),
  provenance: z.unknown().optional(),
});

export const allowlistFileSchema = z.strictObject({
  version: z.literal(1),
  entries: z.array(entrySchema),
});

export type AllowlistEntry = z.infer<typeof entrySchema>;
export type AllowlistFile = z.infer<typeof allowlistFileSchema>;

export function loadAllowlist(paths: HomePaths): AllowlistFile {
  return loadJsonFile(paths.allowlist, 'allowlist.json', allowlistFileSchema, true) ?? { version: 1, entries: [] };
}

export function saveAllowlist(paths: HomePaths, file: AllowlistFile): void {
  const entries = [...file.entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  writeJsonAtomic(paths.allowlist, { version: 1, entries });
}

/** Adds or replaces the entry for a path; returns the entry it replaced, if any. */
export function upsertEntry(file: AllowlistFile, entry: AllowlistEntry): AllowlistEntry | undefined {
  const i = file.entries.findIndex((e) => e.path === entry.path && e.kind === entry.kind);
  if (i < 0) {
    file.entries.push(entry);
    return undefined;
  }
  const old = file.entries[i];
  file.entries[i] = entry;
  return old;
}
