import { printable } from '../escape.js';
import { words, type OwnWords } from '../own-words.js';
import { CanonicalError, canonicalBytes, type Walk } from '../protocol/json/canonical.js';
import { foldedNames, variantOf, type FoldedNames } from '../protocol/fold.js';
import type { JsonObject, JsonValue } from '../protocol/json/reader.js';
import { ABSENT, hashOf, tagged } from './hash.js';
import { canonicalTool, canonicalToolBytes, printTool, type ToolPrint } from './print.js';
import { printHandshake, printedMembers, type HandshakePrint } from './handshake-print.js';

// Admissibility of a served tool surface (tools.lock SPEC §6): everything a server sends is hostile input,
// and a surface that cannot be admitted never produces a lock or a drift verdict. Also computes each
// admitted tool's fingerprints: the tools.lock hashes (pure RFC 8785) and the warden's exact digests.

export interface SurfaceCaps {
  maxPages: number;
  maxTools: number;
  maxToolBytes: number;
  maxSurfaceBytes: number;
  maxInstructionsBytes: number;
  maxCursorBytes: number;
}

/** The tools.lock reference caps. */
export const DEFAULT_CAPS: SurfaceCaps = {
  maxPages: 100,
  maxTools: 10_000,
  maxToolBytes: 1024 * 1024,
  maxSurfaceBytes: 16 * 1024 * 1024,
  maxInstructionsBytes: 64 * 1024,
  maxCursorBytes: 4096,
};

export class InadmissibleError extends Error {
  /** `reason` for the operator; `said`, when the reason is the warden's own words, what a client may be told. */
  constructor(
    readonly reason: string,
    readonly said?: OwnWords,
  ) {
    super(reason);
    this.name = 'InadmissibleError';
  }

  /** A refusal whose reason is the warden's own words throughout (no text of the server's in it). */
  static own(reason: OwnWords): InadmissibleError {
    return new InadmissibleError(reason, reason);
  }
}

export interface LiveTool {
  name: string;
  value: JsonObject;
  /** RFC 8785 text of the whole tool (computed again on use: admitting keeps only its digests, so a listing's
   *  texts are garbage the moment they are hashed), and its length in UTF-8 bytes. */
  readonly canonical: string;
  bytes: number;
  hTool: string;
  /** tools.lock h_desc and h_schema (computed on first use: only locking needs them). */
  readonly hDesc: string;
  readonly hSchema: string;
  /** Exact-number digest of the whole tool. */
  hExact: string;
  /** The warden's full fingerprint (warden.lock), computed on first use. */
  readonly print: ToolPrint;
}

const SENSITIVE_TOP = ['name', 'title', 'inputSchema', 'outputSchema', 'annotations'];
const DESCRIPTION = ['description'];
const DESCRIPTION_FOLDED = foldedNames(DESCRIPTION);
const LISTING_KEYS = ['tools', 'nextCursor'];
const HANDSHAKE_KEYS = ['protocolVersion', 'instructions', 'serverInfo', 'capabilities'];

function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

// Another spelling of a member the warden reads is another reading (protocol/fold.ts, the one fold; a key that
// cannot fold to a sensitive key is passed over there on its length, without folding it).
// Weak: callers may pass a fresh array each time.
const sensitiveOf = new WeakMap<readonly string[], FoldedNames>();

function sensitive(keys: readonly string[]): FoldedNames {
  let s = sensitiveOf.get(keys);
  if (!s) sensitiveOf.set(keys, (s = foldedNames(keys)));
  return s;
}

/** Refuses an object that carries a case-variant of one of `keys` next to (or instead of) the exact key.
 *  `where` names the object in the refusal (a function when naming it costs something). */
export function refuseCaseVariants(obj: JsonObject, keys: readonly string[], where: string | (() => string)): void {
  const names = sensitive(keys);
  for (const k of obj.keys()) {
    const exact = variantOf(k, names);
    if (exact !== undefined) {
      throw new InadmissibleError(`${typeof where === 'string' ? where : where()} carries "${printable(k)}", a case-variant of "${exact}"`);
    }
  }
}

/** A short, escaped rendering of untrusted text for messages (never descriptions: names and keys only): the one
 *  escaper's `printable` (src/escape.ts), re-exported for the callers that take it from here. */
export { printable };

function refuseNestedDescriptionVariants(v: JsonValue, where: () => string): void {
  if (Array.isArray(v)) {
    for (const x of v) refuseNestedDescriptionVariants(x, where);
  } else if (v instanceof Map) {
    refuseCaseVariants(v, DESCRIPTION, where);
    for (const x of v.values()) refuseNestedDescriptionVariants(x, where);
  }
}

/** Whether refuseNestedDescriptionVariants would refuse `v`: the same test on every key, without building a
 *  message, so the walk that names the first offender runs only when there is one. */
function hasDescriptionVariant(v: JsonValue): boolean {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (hasDescriptionVariant(v[i] as JsonValue)) return true;
  } else if (v instanceof Map) {
    for (const k of v.keys()) if (variantOf(k, DESCRIPTION_FOLDED) !== undefined) return true;
    for (const x of v.values()) if (hasDescriptionVariant(x)) return true;
  }
  return false;
}

/** Refuses `v` when it, or anything it nests, carries another spelling of "description" (the walk naming the
 *  offender runs only when there is one). */
export function refuseDescriptionVariants(v: JsonValue, where: () => string): void {
  if (hasDescriptionVariant(v)) refuseNestedDescriptionVariants(v, where);
}

function checkName(name: JsonValue | undefined, index: number): string {
  if (typeof name !== 'string') throw InadmissibleError.own(words`tool ${index} has no string "name"`);
  const bytes = byteLength(name);
  if (bytes === 0 || bytes > 128) throw InadmissibleError.own(words`tool ${index} has a name of ${bytes} bytes (allowed: 1 to 128)`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new InadmissibleError(`tool ${index} has a name with control characters: "${printable(name)}"`);
  return name;
}

/** Admits one tool object and computes its fingerprints. */
export function admitTool(v: JsonValue, index: number, caps: SurfaceCaps): LiveTool {
  if (!(v instanceof Map)) throw InadmissibleError.own(words`tool ${index} is not a JSON object`);
  const name = checkName(v.get('name'), index);
  const where = (): string => `tool "${printable(name)}"`;
  refuseCaseVariants(v, SENSITIVE_TOP, where);
  refuseDescriptionVariants(v, where);
  const desc = v.get('description');
  if (desc !== undefined && desc !== null && typeof desc !== 'string') throw new InadmissibleError(`${where()} has a "description" that is not a string`);
  const schema = v.get('inputSchema');
  if (schema !== undefined && schema !== null && !(schema instanceof Map)) throw new InadmissibleError(`${where()} has an "inputSchema" that is not an object`);
  // One pass gives the tools.lock bytes; the exact form needs a second only when a number differs.
  const w: Walk = { mode: 'jcs', inexact: false };
  let bytes: number;
  let hTool: string;
  try {
    const jcs = canonicalToolBytes(v, w);
    bytes = jcs.length;
    if (bytes > caps.maxToolBytes) throw new InadmissibleError(`${where()} is ${bytes} bytes canonical, over the ${caps.maxToolBytes}-byte cap`);
    hTool = tagged(jcs);
  } catch (err) {
    if (err instanceof CanonicalError) throw new InadmissibleError(`${where()} cannot be canonicalized: ${err.message}`);
    throw err;
  }
  const hExact = w.inexact ? tagged(canonicalBytes(v, { mode: 'exact', inexact: false })) : hTool;
  return new AdmittedTool(name, v, bytes, hTool, hExact);
}

// A class, not an object literal with getters: a listing keeps a thousand of these, and a literal's getters
// are a closure and an accessor pair per tool.
class AdmittedTool implements LiveTool {
  private printed: ToolPrint | undefined;

  constructor(
    readonly name: string,
    readonly value: JsonObject,
    readonly bytes: number,
    readonly hTool: string,
    readonly hExact: string,
  ) {}

  get canonical(): string {
    return canonicalTool(this.value).jcs;
  }

  // A field's RFC 8785 bytes are the bytes it has inside the tool's.
  get hDesc(): string {
    const desc = this.value.get('description');
    return typeof desc === 'string' ? hashOf(desc) : ABSENT;
  }

  get hSchema(): string {
    const schema = this.value.get('inputSchema');
    return schema instanceof Map ? hashOf(schema) : ABSENT;
  }

  get print(): ToolPrint {
    this.printed ??= printTool(this.value, this.hExact);
    return this.printed;
  }
}

/** Accumulates the pages of one listing, enforcing the per-listing rules. */
export class ListingAdmitter {
  readonly tools: LiveTool[] = [];
  /** Members of the pages' results beside "tools" and "nextCursor" (names, up to 16): nothing locks them. */
  readonly otherMembers = new Set<string>();
  private readonly names = new Set<string>();
  private readonly cursors = new Set<string>();
  private pages = 0;
  private bytes = 0;

  constructor(private readonly caps: SurfaceCaps = DEFAULT_CAPS) {}

  /** Admits one page (a tools/list result); returns the next cursor, or undefined when the listing is complete. */
  page(result: JsonValue | undefined): string | undefined {
    if (++this.pages > this.caps.maxPages) throw InadmissibleError.own(words`the listing has more than ${this.caps.maxPages} pages`);
    if (!(result instanceof Map)) throw InadmissibleError.own(words`a tools/list result is not a JSON object`);
    refuseCaseVariants(result, LISTING_KEYS, 'a tools/list result');
    for (const k of result.keys()) if (!LISTING_KEYS.includes(k) && this.otherMembers.size < 16) this.otherMembers.add(k);
    const tools = result.get('tools');
    if (!Array.isArray(tools)) throw InadmissibleError.own(words`a tools/list result has no "tools" array`);
    for (const t of tools) {
      const tool = admitTool(t, this.tools.length, this.caps);
      if (this.names.has(tool.name)) throw new InadmissibleError(`the listing names tool "${printable(tool.name)}" twice (a duplicate name: which of the two a client would use is not known)`);
      this.names.add(tool.name);
      this.bytes += tool.bytes;
      if (this.bytes > this.caps.maxSurfaceBytes) throw InadmissibleError.own(words`the surface exceeds the ${this.caps.maxSurfaceBytes}-byte cap`);
      if (this.tools.length >= this.caps.maxTools) throw InadmissibleError.own(words`the listing has more than ${this.caps.maxTools} tools`);
      this.tools.push(tool);
    }
    const next = result.get('nextCursor');
    if (next === undefined || next === null) return undefined;
    if (typeof next !== 'string') throw InadmissibleError.own(words`"nextCursor" is not a string`);
    if (byteLength(next) > this.caps.maxCursorBytes) throw InadmissibleError.own(words`a cursor exceeds ${this.caps.maxCursorBytes} bytes`);
    if (this.cursors.has(next)) throw InadmissibleError.own(words`the server repeated a cursor (a pagination loop)`);
    this.cursors.add(next);
    return next;
  }
}

export interface Handshake {
  era: string;
  /** Read from a server/discover result (or, for a modern session that asked none, from the lock): judged against
   *  the prints of the stateless era's answer, never the classic one's (docs/adr/0055). */
  stateless?: true;
  instructions: string | undefined;
  serverInfo: { name?: string; version?: string };
  /** The capabilities the server advertised that the warden reads (prompts, resources). */
  serves?: { prompts: boolean; resources: boolean };
  /** Everything else the result carries, as digests (handshake-print.ts), and as served (for `diff`). */
  print: HandshakePrint;
  members: JsonObject;
}

/** Reads what the surface needs from an initialize result, with exact-key discipline (SPEC §3.4). */
export function admitHandshake(result: JsonValue | undefined, caps: SurfaceCaps = DEFAULT_CAPS): Handshake {
  if (!(result instanceof Map)) throw InadmissibleError.own(words`the initialize result is not a JSON object`);
  refuseCaseVariants(result, HANDSHAKE_KEYS, 'the initialize result');
  const era = result.get('protocolVersion');
  if (typeof era !== 'string') throw InadmissibleError.own(words`the initialize result has no string "protocolVersion"`);
  // A revision is a date (YYYY-MM-DD); anything else would reach the client and the reports as the server wrote it.
  if (!/^\d{4}-\d{2}-\d{2}$/.test(era)) throw InadmissibleError.own(words`"protocolVersion" is not a revision date (YYYY-MM-DD) but ${era.length} other characters`);
  const instr = result.get('instructions');
  if (instr !== undefined && instr !== null && typeof instr !== 'string') throw InadmissibleError.own(words`"instructions" is not a string`);
  if (typeof instr === 'string' && byteLength(instr) > caps.maxInstructionsBytes) {
    throw InadmissibleError.own(words`"instructions" exceed the ${caps.maxInstructionsBytes}-byte cap`);
  }
  const info = result.get('serverInfo');
  const serverInfo: Handshake['serverInfo'] = {};
  if (info instanceof Map) {
    for (const k of ['name', 'version'] as const) {
      const s = info.get(k);
      if (typeof s === 'string' && byteLength(s) <= 256) serverInfo[k] = s;
    }
  }
  const caps2 = result.get('capabilities');
  const serves = { prompts: caps2 instanceof Map && caps2.get('prompts') instanceof Map, resources: caps2 instanceof Map && caps2.get('resources') instanceof Map };
  let print: HandshakePrint;
  try {
    print = printHandshake(result);
  } catch (err) {
    if (err instanceof CanonicalError) throw new InadmissibleError(`the initialize result cannot be canonicalized: ${err.message}`);
    throw err;
  }
  return { era, instructions: typeof instr === 'string' ? instr : undefined, serverInfo, serves, print, members: printedMembers(result) };
}
