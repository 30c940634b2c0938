import * as v from 'valibot';
import { ownRecord } from '../../schema/own-record.js';
import { loadJsonFile } from '../json-file.js';
import type { HomePaths } from '../paths.js';
import { updateFile } from '../update.js';

// bundle-state.json: the serial of the last trust bundle this home applied (a lower or equal one is refused
// unless --allow-rollback) and of the last one it created (the next default serial is above both).

const mark = v.strictObject({
  serial: v.pipe(v.number(), v.integer(), v.minValue(1)),
  sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex digits')),
  at: v.pipe(v.string(), v.isoTimestamp('expected an ISO 8601 timestamp')),
});

/** The last applied bundle also records the servers it named: a later bundle that no longer names one removes it. */
const appliedMark = v.strictObject({
  ...mark.entries,
  servers: v.optional(v.array(v.pipe(v.string(), v.maxLength(200)))),
  /** The signer the machine pinned when it applied it (`key <hint>` or `identity <pattern> issuer <issuer>`). */
  pinned: v.optional(v.pipe(v.string(), v.maxLength(4096))),
  /** Per server it named: sha256 of its servers.json entry as the apply wrote it, env values left out. A server
   *  whose entry is no longer that (edited, or removed and added again by the operator) is the machine's own.
   *  Keyed by server id: an own-key record (schema/own-record.ts), so an id such as `constructor` is kept. */
  entries: v.optional(ownRecord(v.string(), v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex digits')))),
});

/** The most pinned signers whose last serial is kept (the oldest beyond are forgotten). */
export const MAX_SERIAL_FLOORS = 64;

const stateSchema = v.strictObject({
  version: v.literal(1),
  applied: v.optional(appliedMark),
  created: v.optional(mark),
  /** Per pinned signer, the serial of the last bundle applied under it: a signer's older bundle stays refused
   *  after another signer's bundle was applied in between. */
  floors: v.optional(v.pipe(ownRecord(v.pipe(v.string(), v.maxLength(4096)), v.pipe(v.number(), v.integer(), v.minValue(1))), v.check((r) => Object.keys(r).length <= MAX_SERIAL_FLOORS, `expected at most ${MAX_SERIAL_FLOORS} signers`))),
});

export type BundleState = v.InferOutput<typeof stateSchema>;
export type BundleMark = v.InferOutput<typeof mark>;

export function loadBundleState(paths: HomePaths): BundleState {
  return loadJsonFile(paths.bundleState, 'bundle-state.json', stateSchema, true) ?? { version: 1 };
}

export function renderBundleState(s: BundleState): string {
  return JSON.stringify({ version: 1, ...(s.applied ? { applied: s.applied } : {}), ...(s.created ? { created: s.created } : {}), ...(s.floors ? { floors: s.floors } : {}) }, null, 2) + '\n';
}

/** The serial `bundle create` uses when none is given: the current Unix time in seconds, or one above the last
 *  serial this home created or applied if that is higher (a clock set back never reuses a serial). */
export function nextSerial(s: BundleState, now: Date): number {
  return Math.max(Math.floor(now.getTime() / 1000), (s.applied?.serial ?? 0) + 1, (s.created?.serial ?? 0) + 1);
}

/** Changes bundle-state.json under its lock (store/update.ts). */
export function updateBundleState<R>(paths: HomePaths, apply: (s: BundleState) => R): Promise<R> {
  return updateFile(paths.bundleState, 'bundle-state.json', () => loadBundleState(paths), renderBundleState, apply);
}
