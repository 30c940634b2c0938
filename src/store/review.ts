import fs from 'node:fs';
import path from 'node:path';
import * as v from 'valibot';
import { objectRecord } from '../schema/own-record.js';
import { writeJsonAtomic } from './atomic.js';
import { loadJsonFile } from './json-file.js';
import type { HomePaths } from './paths.js';

// What `diff` last showed of a server, as digests, so that `pin` accepts that and nothing else (docs/adr/0054):
// `pin` launches the server again, and a server can serve the review one thing and the pin another. Written
// owner-only beside the other caches; removed once a pin took it.

const DIGEST = v.pipe(v.string(), v.regex(/^sha256:[0-9a-f]{64}$/));
const schema = v.strictObject({
  /** The tools.lock surface_hash the diff was made against: a review of another lock is no review of this one. */
  lockedSurfaceHash: v.pipe(v.string(), v.maxLength(80)),
  at: v.pipe(v.string(), v.maxLength(40)),
  /** The live surface hash (era, instructions, tools) and each tool's exact digest. */
  surface: DIGEST,
  /** Every own key (a tool may be named "constructor" or "__proto__"), read into a record with no prototype, so a
   *  name the review lacks is absent and never an inherited value. */
  tools: v.pipe(
    objectRecord(v.pipe(v.string(), v.maxLength(4096)), DIGEST),
    v.check((t) => Object.keys(t).length <= 100_000),
    v.transform((t) => Object.defineProperties(Object.create(null) as Record<string, string>, Object.getOwnPropertyDescriptors(t))),
  ),
  handshakes: v.pipe(v.array(DIGEST), v.maxLength(2)),
  /** A hybrid's classic initialize result, when fetched (docs/adr/0055). */
  classicHandshakes: v.optional(v.pipe(v.array(DIGEST), v.maxLength(2))),
  catalogs: DIGEST,
  conditional: v.pipe(v.array(v.pipe(v.string(), v.maxLength(4096))), v.maxLength(100_000)),
});

export type Review = v.InferOutput<typeof schema>;

function fileOf(paths: HomePaths, id: string): string {
  return path.join(paths.cacheDir, `review.${id}.json`);
}

export function loadReview(paths: HomePaths, id: string): Review | undefined {
  return loadJsonFile(fileOf(paths, id), `what 'mcp-warden diff ${id}' showed`, schema, true);
}

export function saveReview(paths: HomePaths, id: string, review: Review): void {
  fs.mkdirSync(paths.cacheDir, { recursive: true, mode: 0o700 });
  // No prototype: a tool may be named "__proto__".
  writeJsonAtomic(fileOf(paths, id), { ...review, tools: Object.assign(Object.create(null) as Record<string, string>, review.tools) });
}

export function clearReview(paths: HomePaths, id: string): void {
  fs.rmSync(fileOf(paths, id), { force: true });
}
