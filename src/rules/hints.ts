import { JsonNumber, type JsonObject, type JsonValue } from '../protocol/json/reader.js';
import { hintSpellings } from '../surface/hint-moves.js';
import { KINDS, type Kind } from './schema.js';

// A server's annotations are its claim about its own tool. They may dispute the operator's classification in
// the dangerous direction and never relax it (seed 003: a hostile server calls its tools read-only):
// - `destructiveHint: true` claims destructive (whatever readOnlyHint says: a claim of danger is never cancelled
//   by a claim of safety from the same party);
// - `readOnlyHint: false` claims at least a local change;
// - `openWorldHint: true` with `readOnlyHint: false` claims at least a change elsewhere (a read of the open world,
//   a web search, is still a read);
// - a missing annotation claims nothing: the defaults are the permissive values, so absence contradicts nothing.
// A value that is not a JSON boolean is read as a lax reader reads it (pydantic coerces "true", "yes", "on",
// "1", 1, 1.0 to true and "false", "no", "off", "0", 0, 0.0 to false, case-insensitively): a claim of danger to
// any reader is a claim here. null, and what no reader coerces, claim nothing, as absence does. (A hint that
// changed to such a value since the lock is widening and blocked before the rules see it: surface/hint-moves.ts.)
// A hint is read from every member a client matching names without regard to case takes for it (the exact name
// and each other spelling, protocol/fold.ts: such a client keeps the last, another the first), and the most
// dangerous reading among them is the one taken: any of them claiming danger is the claim, and a permissive
// value counts only when every spelling says it.

const rank = (k: Kind): number => KINDS.indexOf(k);

export interface HintClaim {
  /** The least dangerous kind the annotations allow, or undefined when they claim nothing. */
  atLeast: Kind | undefined;
  /** The annotation names behind it (names only: their values are the server's text). */
  hints: string[];
}

function annotationsOf(tool: JsonObject): JsonObject | undefined {
  const a = tool.get('annotations');
  return a instanceof Map ? a : undefined;
}

const LAX_TRUE = new Set(['true', 'yes', 'on', 't', 'y', '1']);
const LAX_FALSE = new Set(['false', 'no', 'off', 'f', 'n', '0']);

/** A hint's value as a lax reader (pydantic's bool) takes it, or undefined when it takes it for neither. */
function laxBoolean(v: JsonValue | undefined): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    return LAX_TRUE.has(s) ? true : LAX_FALSE.has(s) ? false : undefined;
  }
  if (v instanceof JsonNumber) {
    const n = Number(v.lexeme);
    return n === 1 ? true : n === 0 ? false : undefined;
  }
  return undefined;
}

type Spellings = Map<string, [string, JsonValue][]>;

/** Whether some spelling of hint `key` reads as `value` to a lax reader. */
const is = (s: Spellings, key: string, value: boolean): boolean => (s.get(key) ?? []).some(([, v]) => laxBoolean(v) === value);

/** Whether hint `key` is present and every spelling of it is the JSON literal `value`. */
const only = (s: Spellings, key: string, value: boolean): boolean => {
  const members = s.get(key) ?? [];
  return members.length > 0 && members.every(([, v]) => v === value);
};

/** What the tool's annotations claim about its kind. */
export function hintClaim(tool: JsonObject): HintClaim {
  const a = annotationsOf(tool);
  if (!a) return { atLeast: undefined, hints: [] };
  const s = hintSpellings(a);
  const claims: [Kind, string[]][] = [];
  if (is(s, 'destructiveHint', true)) claims.push(['destructive', ['destructiveHint']]);
  if (is(s, 'readOnlyHint', false) && is(s, 'openWorldHint', true)) claims.push(['remote-change', ['readOnlyHint', 'openWorldHint']]);
  if (is(s, 'readOnlyHint', false)) claims.push(['local-change', ['readOnlyHint']]);
  if (claims.length === 0) return { atLeast: undefined, hints: [] };
  claims.sort((x, y) => rank(y[0]) - rank(x[0]));
  const [atLeast, hints] = claims[0] as [Kind, string[]];
  return { atLeast, hints };
}

/** The hints that dispute `kind` (empty when none does). */
export function disputingHints(tool: JsonObject, kind: Kind): string[] {
  const claim = hintClaim(tool);
  return claim.atLeast !== undefined && rank(claim.atLeast) > rank(kind) ? claim.hints : [];
}

/**
 * The kind to propose to the operator from the server's annotations (offered by add/import/install/rules
 * --propose, always shown as the server's claim and applied only on the operator's word). Never less than what
 * the hints dispute, so a confirmed proposal has no mismatch; without annotations, the protocol's defaults
 * (not read-only, destructive, open world) make it `destructive`.
 */
export function proposedKind(tool: JsonObject): { kind: Kind; from: 'annotations' | 'defaults' } {
  const a = annotationsOf(tool);
  if (!a || a.size === 0) return { kind: 'destructive', from: 'defaults' };
  const s = hintSpellings(a);
  const readOnly = only(s, 'readOnlyHint', true);
  const destructive = !only(s, 'destructiveHint', false); // the protocol's default is true
  const openWorld = !only(s, 'openWorldHint', false); // the protocol's default is true
  let kind: Kind = readOnly ? 'read' : destructive ? 'destructive' : openWorld ? 'remote-change' : 'local-change';
  const claim = hintClaim(tool).atLeast;
  if (claim !== undefined && rank(claim) > rank(kind)) kind = claim;
  return { kind, from: 'annotations' };
}
