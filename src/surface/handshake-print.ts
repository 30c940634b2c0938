import type { JsonObject } from '../protocol/json/reader.js';
import { hashOf, tagged } from './hash.js';
import { canonicalBytes } from '../protocol/json/canonical.js';

// The initialize result as surface (docs/adr/0045-handshake-surface.md). Two of its members are judged on their
// own: `protocolVersion` (the era, reported when it differs) and `instructions` (h_instructions in tools.lock,
// refusing the whole server). Everything else it carries (serverInfo with its name, title, description, icons
// and website, capabilities with `experimental`, `_meta`, members no revision defines) reaches the client only
// when the whole of it is byte-equal, in exact-number canonical form, to what was locked: one digest of the
// rest, plus a digest per member so a diff can name what changed (never show it).

export interface HandshakePrint {
  /** Exact-number canonical digest of the initialize result without protocolVersion and instructions. */
  hExact: string;
  /** The same digest per member, by member name. */
  fields: Record<string, string>;
}

/** The members of an initialize result judged apart from its print. */
const JUDGED_APART = new Set(['protocolVersion', 'instructions']);

/** The members of an initialize result the print covers. */
export function printedMembers(result: JsonObject): JsonObject {
  return new Map([...result].filter(([k]) => !JUDGED_APART.has(k)));
}

/** The print of an initialize result (already admitted: an object with exact-key discipline). */
export function printHandshake(result: JsonObject): HandshakePrint {
  const rest = printedMembers(result);
  const fields = Object.create(null) as Record<string, string>;
  for (const [k, v] of rest) fields[k] = hashOf(v, 'exact');
  return { hExact: tagged(canonicalBytes(rest, { mode: 'exact', inexact: false })), fields };
}

/** How a served initialize result stands against the prints locked for it (one per distinct form the server
 *  served at lock time: with and without client capabilities). */
export interface HandshakeDrift {
  /** matched: equal to a locked print; changed: equal to none; unlocked: no print was locked (an entry taken by
   *  an mcp-warden before 2026-12, or no warden.lock entry at all), so nothing proves it. */
  state: 'matched' | 'changed' | 'unlocked';
  /** Names of the members that differ from the first locked print (never their values). */
  fields: string[];
}

function changedMembers(a: HandshakePrint, b: HandshakePrint): string[] {
  const own = (o: Record<string, string>, k: string): string | undefined => (Object.hasOwn(o, k) ? o[k] : undefined);
  const names = new Set([...Object.keys(a.fields), ...Object.keys(b.fields)]);
  return [...names].filter((k) => own(a.fields, k) !== own(b.fields, k));
}

/** A session's result (one client, one answer) against the locked prints: proven when equal to either form. */
export function handshakeDrift(locked: readonly HandshakePrint[] | undefined, live: HandshakePrint): HandshakeDrift {
  if (locked === undefined || locked.length === 0) return { state: 'unlocked', fields: [] };
  if (locked.some((p) => p.hExact === live.hExact)) return { state: 'matched', fields: [] };
  return { state: 'changed', fields: changedMembers(locked[0] as HandshakePrint, live).sort() };
}

/** Both forms served out of band (verify, diff, the daemon) against the locked prints, form by form: the print of
 *  the answer to a client offering capabilities is the first; the second, present when the answers differed, is
 *  the answer to a client offering none. Every form a session may be released on is one a review was shown. */
export function handshakeDriftByForm(locked: readonly HandshakePrint[] | undefined, full: HandshakePrint, bare: HandshakePrint): HandshakeDrift {
  if (locked === undefined || locked.length === 0) return { state: 'unlocked', fields: [] };
  const lockedFull = locked[0] as HandshakePrint;
  const lockedBare = locked[1] ?? lockedFull;
  if (lockedFull.hExact === full.hExact && lockedBare.hExact === bare.hExact) return { state: 'matched', fields: [] };
  const fields = new Set([...changedMembers(lockedFull, full), ...changedMembers(lockedBare, bare)]);
  // Equal members, but the forms moved between the two answers (e.g. the answers no longer differ): name them all.
  if (fields.size === 0) for (const k of Object.keys(bare.fields)) fields.add(k);
  return { state: 'changed', fields: [...fields].sort() };
}

/** The distinct prints among those served at lock time, in the order served. */
export function distinctPrints(prints: readonly HandshakePrint[]): HandshakePrint[] {
  const seen = new Set<string>();
  return prints.filter((p) => !seen.has(p.hExact) && (seen.add(p.hExact), true));
}
