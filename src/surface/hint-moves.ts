import { foldedNames, variantOf } from '../protocol/fold.js';
import { canonicalize } from '../protocol/json/canonical.js';
import type { JsonObject, JsonValue } from '../protocol/json/reader.js';
import { toolDigests } from './print.js';

// How a tool's four hints moved between its lock and a live listing, and the one exception the surface judge
// makes for a changed tool: narrowing (docs/adr/0036-enumerated-exceptions.md).
//
// Each hint has a more-gated boolean literal, which is also its meaning when absent (the protocol's defaults:
// readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true), and a less-gated literal.
// Per hint, comparing the locked value L with the live value V (both as exact canonical JSON, absent included):
//   unchanged  V is L
//   widening   V is not a JSON boolean (a lax reader, pydantic, reads "true", 1, "yes"... as either literal);
//              or V is the less-gated literal; or destructiveHint true -> absent (the literal true is the claim
//              the operator rules read, and it is gone)
//   narrowed   L is the less-gated literal and V is the more-gated literal or absent
//   other      any other change (absent spelled out, a gated literal dropped, a non-boolean L replaced)
// A member of the live annotations that a client matching names without regard to case reads as a hint
// (protocol/fold.ts, the one fold: "ReadOnlyHint", "readonlyhint", "readOnlyHint\u0000x", "readOnlyHınt"...;
// Go's encoding/json keeps the last, so it may read that member rather than the exact one) is widening
// ("readOnlyHint spelled otherwise") unless the locked annotations hold that same member with the same value:
// what such a client reads is a claim the lock never approved, and its direction is the server's choice.
// A changed tool is narrowing-only when no hint widened, none changed otherwise, at least one narrowed, and
// the live tool with its narrowed hints put back to their locked values has the locked tool's digests (RFC 8785
// and exact): every other byte of the tool, annotations included, is the locked one.

interface Hint {
  key: string;
  /** The more-gated literal (and the meaning of absence). */
  gated: boolean;
  /** What the audit says when the hint moves to the less-gated literal. */
  widened: string;
}

export const HINTS: readonly Hint[] = [
  { key: 'readOnlyHint', gated: false, widened: 'readOnlyHint gained' },
  { key: 'destructiveHint', gated: true, widened: 'destructiveHint set false' },
  { key: 'idempotentHint', gated: false, widened: 'idempotentHint gained' },
  { key: 'openWorldHint', gated: true, widened: 'openWorldHint set false' },
];

export interface HintMoves {
  /** Hints that moved toward a less-gated claim (names and a fixed phrase, never values). */
  widening: string[];
  /** Hints that moved from the less-gated literal to the more-gated claim. */
  narrowed: string[];
  /** Whether some hint changed in a way that is neither. */
  other: boolean;
}

function annotations(tool: JsonObject): JsonObject | undefined {
  const a = tool.get('annotations');
  return a instanceof Map ? a : undefined;
}

const HINT_NAMES = foldedNames(HINTS.map((h) => h.key));

/** Every member of `annotations` a case-insensitive reader takes for one of the four hints, by the hint's exact
 *  name, in the object's order: the exact member and each other spelling (protocol/fold.ts). Empty for a hint
 *  with neither. */
export function hintSpellings(annotations: JsonObject | undefined): Map<string, [string, JsonValue][]> {
  const out = new Map<string, [string, JsonValue][]>();
  if (!annotations) return out;
  for (const [k, v] of annotations) {
    const hint = HINT_NAMES.exact.has(k) ? k : variantOf(k, HINT_NAMES);
    if (hint === undefined) continue;
    const list = out.get(hint);
    if (list) list.push([k, v]);
    else out.set(hint, [[k, v]]);
  }
  return out;
}

function hintOf(tool: JsonObject, key: string): JsonValue | undefined {
  return annotations(tool)?.get(key);
}

function same(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (typeof a === 'boolean' || typeof b === 'boolean') return a === b;
  return canonicalize(a, 'exact') === canonicalize(b, 'exact');
}

/** How each hint moved from the locked tool to the live one. */
export function hintMoves(locked: JsonObject, live: JsonObject): HintMoves {
  const moves: HintMoves = { widening: [], narrowed: [], other: false };
  const lockedAnnotations = annotations(locked);
  const spellings = hintSpellings(annotations(live));
  for (const h of HINTS) {
    const otherwise = (spellings.get(h.key) ?? []).some(([k, v]) => k !== h.key && !(lockedAnnotations?.has(k) === true && same(lockedAnnotations.get(k), v)));
    if (otherwise) moves.widening.push(`${h.key} spelled otherwise`);
    const was = hintOf(locked, h.key);
    const now = hintOf(live, h.key);
    if (same(was, now)) continue;
    if (now !== undefined && typeof now !== 'boolean') moves.widening.push(`${h.key} not a boolean`);
    else if (now === !h.gated) moves.widening.push(h.widened);
    else if (h.key === 'destructiveHint' && was === true && now === undefined) moves.widening.push('destructiveHint lost');
    else if (was === !h.gated && (now === h.gated || now === undefined)) moves.narrowed.push(h.key);
    else moves.other = true;
  }
  return moves;
}

/** Whether `live` is `locked` with only the hints in `narrowed` moved (hintMoves said how): the live tool with
 *  those hints put back to their locked values has the locked digests. A live tool whose annotations are not
 *  an object is not a narrowing of one whose are. */
export function onlyNarrowed(locked: JsonObject, lockedDigests: { hTool: string; hExact: string }, live: JsonObject, narrowed: readonly string[]): boolean {
  const liveAnnotations = annotations(live);
  if (narrowed.length === 0 || !liveAnnotations) return false;
  const restored = new Map(liveAnnotations);
  for (const key of narrowed) {
    const was = hintOf(locked, key);
    if (was === undefined) restored.delete(key);
    else restored.set(key, was);
  }
  const tool = new Map(live);
  tool.set('annotations', restored);
  const d = toolDigests(tool);
  return d.hTool === lockedDigests.hTool && d.hExact === lockedDigests.hExact;
}
