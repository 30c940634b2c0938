import { CanonicalError, es6, inexactText } from './number.js';
import { JsonNumber, type JsonValue } from './reader.js';

// RFC 8785 (JCS) canonical form over a lossless value, and the warden's exact variant.
// - 'jcs': pure RFC 8785. Numbers are serialized as ES6 doubles, so 9007199254740993 and
//   9007199254740992 canonicalize alike (tools.lock v1 hashes this, for interop).
// - 'exact': identical, except that a number whose double would not hold its exact decimal value keeps its
//   digits, written as `<digits>e<exponent>` (no leading or trailing zeros in digits, sign first). A schema
//   bound moved from 9007199254740993 to 9007199254740992 changes this digest (warden.lock).
// Member order: UTF-16 code units of the keys (JS string comparison). Strings: ES JSON.stringify escaping,
// which is RFC 8785's.

export type CanonicalMode = 'jcs' | 'exact';


export { CanonicalError };

export interface Walk {
  mode: CanonicalMode;
  /** Set when some number's exact text differs from its RFC 8785 text. */
  inexact: boolean;
}

// The canonical form is written as UTF-8 into one buffer, reused from call to call. The admission hashes
// bytes and never needs the text: a text built by concatenation left ~10 MB of garbage per 1 MiB listing,
// and collecting it was a third of the admission. Callers that want text decode the bytes, exactly: the
// canonical text is well-formed UTF-16 (JSON.stringify escapes a lone surrogate), so the round trip is lossless.
const KEPT = 1 << 20; // a buffer a huge value grew beyond this is dropped at the next call
let buf = Buffer.allocUnsafe(1 << 16);
let pos = 0;

function reserve(n: number): void {
  if (pos + n <= buf.length) return;
  const grown = Buffer.allocUnsafe(Math.max(2 * buf.length, pos + n));
  buf.copy(grown, 0, 0, pos);
  buf = grown;
}

function byte(c: number): void {
  if (pos === buf.length) reserve(1);
  buf[pos++] = c;
}

/** Text known to be ASCII (numbers, literals). */
function ascii(s: string): void {
  reserve(s.length);
  const b = buf;
  let p = pos;
  for (let i = 0; i < s.length; i++) b[p++] = s.charCodeAt(i);
  pos = p;
}

/** A string as JSON.stringify writes it (RFC 8785's escaping), in UTF-8. Encoded here as long as it needs no
 *  escape; a quote, backslash, control character or surrogate (lone ones are escaped, pairs kept) sends it
 *  to JSON.stringify. */
function string(s: string): void {
  const n = s.length;
  reserve(3 * n + 2); // a UTF-16 unit is at most 3 bytes of UTF-8
  const b = buf;
  let p = pos;
  b[p++] = 0x22;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      if (c < 0x20 || c === 0x22 || c === 0x5c) return escaped(s);
      b[p++] = c;
    } else if (c < 0x800) {
      b[p++] = 0xc0 | (c >> 6);
      b[p++] = 0x80 | (c & 0x3f);
    } else if (c >= 0xd800 && c <= 0xdfff) {
      return escaped(s);
    } else {
      b[p++] = 0xe0 | (c >> 12);
      b[p++] = 0x80 | ((c >> 6) & 0x3f);
      b[p++] = 0x80 | (c & 0x3f);
    }
  }
  b[p++] = 0x22;
  pos = p;
}

/** The slow path of string(), from the same position (what string() wrote is overwritten). */
function escaped(s: string): void {
  const text = JSON.stringify(s);
  reserve(3 * text.length);
  pos += buf.write(text, pos, 'utf8');
}

/** The keys of an object in RFC 8785 order: UTF-16 code units, what `<` on strings and a default sort compare
 *  (keys are distinct, so the order is total). Most objects have a handful of keys: insertion sort needs no
 *  comparator calls or second array for them. A wide object gets the n log n sort (a hostile server can
 *  send 50,000 keys in reverse order). */
function sortedKeys(obj: ReadonlyMap<string, unknown>): string[] {
  if (obj.size > 16) return Array.from(obj.keys()).sort();
  const keys: string[] = [];
  for (const k of obj.keys()) {
    let j = keys.length;
    while (j > 0 && (keys[j - 1] as string) > k) {
      keys[j] = keys[j - 1] as string;
      j--;
    }
    keys[j] = k;
  }
  return keys;
}

function write(value: JsonValue, w: Walk): void {
  if (typeof value === 'string') string(value);
  else if (value === null) ascii('null');
  else if (value === true) ascii('true');
  else if (value === false) ascii('false');
  else if (value instanceof JsonNumber) {
    const js = es6(value.lexeme);
    const exact = inexactText(value.lexeme, js);
    if (exact !== undefined) w.inexact = true;
    ascii(exact !== undefined && w.mode === 'exact' ? exact : js);
  } else if (Array.isArray(value)) {
    byte(0x5b);
    for (let i = 0; i < value.length; i++) {
      if (i) byte(0x2c);
      write(value[i] as JsonValue, w);
    }
    byte(0x5d);
  } else {
    const keys = sortedKeys(value);
    byte(0x7b);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      if (i) byte(0x2c);
      string(k);
      byte(0x3a);
      write(value.get(k) as JsonValue, w);
    }
    byte(0x7d);
  }
}

/** The canonical form of `value` as UTF-8, in a view of the writer's buffer: valid until the next call of
 *  anything in this module, so hash or copy it first. Throws CanonicalError as canonicalize does. */
export function canonicalBytes(value: JsonValue, w: Walk): Buffer {
  if (buf.length > KEPT) buf = Buffer.allocUnsafe(1 << 16);
  pos = 0;
  write(value, w);
  return buf.subarray(0, pos);
}

/** Canonical text of a lossless JSON value. Throws CanonicalError for a value RFC 8785 cannot transform. */
export function canonicalize(value: JsonValue, mode: CanonicalMode = 'jcs'): string {
  return canonicalBytes(value, { mode, inexact: false }).toString('utf8');
}

/** Both canonical texts in one pass when they agree (the common case): `exact` is `jcs` unless a number differs. */
export function canonicalizeBoth(value: JsonValue): { jcs: string; exact: string } {
  const w: Walk = { mode: 'jcs', inexact: false };
  const jcs = canonicalBytes(value, w).toString('utf8');
  return { jcs, exact: w.inexact ? canonicalize(value, 'exact') : jcs };
}

/** Builds a lossless value from plain JS data the warden made itself (never from wire bytes). */
export function fromPlain(v: unknown): JsonValue {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return new JsonNumber(String(v));
  if (Array.isArray(v)) return v.map(fromPlain);
  if (typeof v === 'object') return new Map(Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).map(([k, x]) => [k, fromPlain(x)]));
  throw new CanonicalError(`cannot represent ${typeof v} in JSON`);
}
