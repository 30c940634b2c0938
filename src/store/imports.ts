import * as v from 'valibot';
import { loadJsonFile } from './json-file.js';
import type { HomePaths } from './paths.js';
import { updateFile } from './update.js';

// imports.json: for each client configuration file `import` rewrote, each entry's original text (byte for byte)
// and the value it was replaced with, so that `unwrap` can put the original back, and only where the entry is
// still what the warden wrote. It holds what the client file held (env values included): owner-only, like
// every file of the home.

const recordSchema = v.strictObject({
  /** The server id in servers.json. */
  id: v.string(),
  /** Where the entry is in the file (a JSON path). */
  location: v.array(v.string()),
  original: v.string(),
  /** The value written in its place (compared as JSON, so a client that re-formats its file does not matter). */
  wrapped: v.unknown(),
  importedAt: v.pipe(v.string(), v.isoTimestamp('expected an ISO 8601 timestamp')),
});

const importsSchema = v.strictObject({
  version: v.literal(1),
  files: v.record(
    v.string(),
    v.strictObject({
      client: v.string(),
      entries: v.array(recordSchema),
    }),
  ),
});

export type ImportRecord = v.InferOutput<typeof recordSchema>;
export type ImportsFile = v.InferOutput<typeof importsSchema>;

export function loadImports(paths: HomePaths): ImportsFile {
  return loadJsonFile(paths.imports, 'imports.json', importsSchema, true) ?? { version: 1, files: {} };
}

/** Changes imports.json under its lock (read inside it, saved atomically if changed; store/update.ts). */
export function updateImports<R>(paths: HomePaths, apply: (file: ImportsFile) => R | Promise<R>): Promise<R> {
  return updateFile(paths.imports, 'imports.json', () => loadImports(paths), (f) => JSON.stringify(f, null, 2) + '\n', apply);
}

/** A JSON path as one comparable string. */
export function locationKey(location: string[]): string {
  return JSON.stringify(location);
}
