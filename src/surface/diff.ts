import type { JsonObject } from '../protocol/json/reader.js';
import type { Handshake, LiveTool } from './admit.js';
import type { LockEntry } from './lockfile.js';
import { printTool, type ToolPrint } from './print.js';
import type { Catalogs } from './catalog.js';
import { hintMoves, onlyNarrowed } from './hint-moves.js';
import { handshakeDrift, type HandshakeDrift, type HandshakePrint } from './handshake-print.js';

// Comparing a locked surface with a live one. Classes (tools.lock SPEC §8, plus the warden's `widening`),
// most severe first:
//   widening      an annotation moved toward a less-gated claim (readOnlyHint gained, destructiveHint lost or
//                 set false, idempotentHint gained, openWorldHint set false, a hint changed to a value that is
//                 not a JSON boolean, a hint spelled otherwise that the lock does not hold): the server choosing
//                 its own permission tier (hint-moves.ts)
//   instructions  the server's instructions changed (prompt text for every tool)
//   handshake     anything else of the initialize result changed, or no print of it was locked: serverInfo
//                 (name, title, description...), capabilities, _meta, unknown members (handshake-print.ts)
//   description   a tool's description, or any string under a "description" key inside it, changed
//   schema        inputSchema/outputSchema changed other than in their descriptions, or annotations changed
//   metadata      any other field (title, icons, _meta, fields unknown to the spec)
//   added         a tool the lock does not know
//   removed       a locked tool is gone
// plus `era` when the negotiated revision differs (reported; tools are still compared by their own digests).

export type DriftClass = 'widening' | 'instructions' | 'handshake' | 'description' | 'schema' | 'metadata' | 'added' | 'removed';
export const CLASS_ORDER: DriftClass[] = ['widening', 'instructions', 'handshake', 'description', 'schema', 'metadata', 'added', 'removed'];

export interface ToolDrift {
  name: string;
  state: 'matched' | 'changed' | 'added' | 'removed';
  /** Classes that apply, most severe first. */
  classes: DriftClass[];
  /** Names of the top-level fields that differ (never their values). */
  fields: string[];
  /** Which hints widened, e.g. "readOnlyHint gained". */
  widening: string[];
  /** True when the live tool is the locked one with only hints moved from the less-gated literal to the
   *  more-gated claim, every other byte equal (hint-moves.ts). */
  narrowingOnly: boolean;
}

export interface SurfaceDiff {
  era: { locked: string; live: string } | undefined;
  instructionsChanged: boolean;
  /** The rest of the initialize result against its locked prints. */
  handshake: HandshakeDrift;
  tools: ToolDrift[];
}

/** What warden.lock adds for one server: per-tool exact prints (recomputed from tools.lock's tool when
 * missing), and the tools the server lists only to clients that offer capabilities. */
export interface LockedExtra {
  prints?: Record<string, ToolPrint>;
  conditional?: readonly string[];
  catalogs?: Catalogs;
  handshake?: readonly HandshakePrint[];
  /** Prints of the classic initialize result of a server locked over the stateless flow that serves both eras
   *  (docs/adr/0055); absent for a server of one era and in older entries. */
  classicHandshake?: readonly HandshakePrint[];
}

/** The prints a handshake of this era is proven against: a discover result against `handshake` (the stateless
 *  flow's prints, or the classic ones through admitDiscover's mapping when the server was locked classic); an
 *  initialize result against `classicHandshake` when the lock holds one (a hybrid), never against the other
 *  era's; without one (a server of one era, an older entry) against `handshake`, as before. */
export function printsForEra(extra: LockedExtra | undefined, hs: Pick<Handshake, 'stateless'>): readonly HandshakePrint[] | undefined {
  return hs.stateless ? extra?.handshake : (extra?.classicHandshake ?? extra?.handshake);
}

function changedFields(a: ToolPrint, b: ToolPrint): string[] {
  const keys = new Set([...Object.keys(a.fields), ...Object.keys(b.fields)]);
  const own = (o: Record<string, string>, k: string): string | undefined => (Object.hasOwn(o, k) ? o[k] : undefined);
  return [...keys].filter((k) => own(a.fields, k) !== own(b.fields, k)).sort();
}

function compareTool(name: string, lockedHTool: string, locked: JsonObject, lockedPrint: () => ToolPrint, live: LiveTool): ToolDrift {
  if (lockedHTool === live.hTool && lockedPrint().hExact === live.hExact) {
    return { name, state: 'matched', classes: [], fields: [], widening: [], narrowingOnly: false };
  }
  const fields = changedFields(lockedPrint(), live.print);
  const classes = new Set<DriftClass>();
  const { widening, narrowed, other } = hintMoves(locked, live.value);
  if (widening.length > 0) classes.add('widening');
  if (fields.includes('description') || lockedPrint().hNestedDescriptions !== live.print.hNestedDescriptions) classes.add('description');
  const shapeMoved = ['inputSchema', 'outputSchema'].some((f) => lockedPrint().shapes[f] !== live.print.shapes[f]);
  if (shapeMoved || fields.includes('annotations')) classes.add('schema');
  if (fields.some((f) => !['description', 'inputSchema', 'outputSchema', 'annotations'].includes(f))) classes.add('metadata');
  // The one exception for a changed tool, exact on the whole tool (hint-moves.ts, ADR 0036).
  const narrowingOnly = widening.length === 0 && !other && fields.length === 1 && fields[0] === 'annotations' && onlyNarrowed(locked, { hTool: lockedHTool, hExact: lockedPrint().hExact }, live.value, narrowed);
  return { name, state: 'changed', classes: CLASS_ORDER.filter((c) => classes.has(c)), fields, widening, narrowingOnly };
}

/** Classifies every difference between a lock entry and a live surface. */
export function diffSurface(entry: LockEntry, extra: LockedExtra | undefined, hs: Handshake, live: readonly LiveTool[]): SurfaceDiff {
  const liveByName = new Map(live.map((t) => [t.name, t]));
  const conditional = new Set(extra?.conditional ?? []);
  const tools: ToolDrift[] = [];
  for (const lt of entry.tools) {
    const now = liveByName.get(lt.name);
    if (!now) {
      // A tool offered only to capable clients is expected to be missing for one that offered less.
      if (!conditional.has(lt.name)) tools.push({ name: lt.name, state: 'removed', classes: ['removed'], fields: [], widening: [], narrowingOnly: false });
      continue;
    }
    let print = extra?.prints && Object.hasOwn(extra.prints, lt.name) ? extra.prints[lt.name] : undefined;
    tools.push(compareTool(lt.name, lt.h_tool, lt.tool, () => (print ??= printTool(lt.tool)), now));
    liveByName.delete(lt.name);
  }
  for (const t of liveByName.values()) tools.push({ name: t.name, state: 'added', classes: ['added'], fields: [], widening: [], narrowingOnly: false });
  tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    era: entry.protocol.era === hs.era ? undefined : { locked: entry.protocol.era, live: hs.era },
    instructionsChanged: (entry.instructions ?? null) !== (hs.instructions ?? null),
    handshake: handshakeDrift(printsForEra(extra, hs), hs.print),
    tools,
  };
}

/** The most severe class of a diff, or undefined when nothing drifted. */
export function worstClass(d: SurfaceDiff): DriftClass | undefined {
  const all = new Set(d.tools.flatMap((t) => t.classes));
  if (d.instructionsChanged) all.add('instructions');
  if (d.handshake.state !== 'matched') all.add('handshake');
  return CLASS_ORDER.find((c) => all.has(c));
}
