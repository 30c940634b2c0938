import { CanonicalError, es6, inexactText } from './number.js';
import { JsonNumber, type JsonValue } from './reader.js';
import { ByteSink } from './sink.js';

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

// The canonical form is written as UTF-8 into one sink, reused from call to call (sink.ts says why). Callers
// that want text decode the bytes, exactly: canonical text is well-formed UTF-16 (a lone surrogate is
// escaped), so the round trip is lossless.
const sink = new ByteSink();

// The sorted keys of the objects being written, a segment per open object (a nested object's segment sits
// above its parent's): no array per object.
const keyStack: string[] = [];
let keyTop = 0;

/** Pushes the keys of an object in RFC 8785 order: UTF-16 code units, what `<` on strings and a default sort
 *  compare (keys are distinct, so the order is total). Most objects have a handful of keys: insertion sort
 *  needs no comparator calls for them. A wide object gets the n log n sort (a hostile server can send 50,000
 *  keys in reverse order). */
function pushSortedKeys(obj: ReadonlyMap<string, unknown>): void {
  const base = keyTop;
  if (obj.size > 16) {
    for (const k of Array.from(obj.keys()).sort()) keyStack[keyTop++] = k;
    return;
  }
  for (const k of obj.keys()) {
    let j = keyTop++;
    while (j > base && (keyStack[j - 1] as string) > k) {
      keyStack[j] = keyStack[j - 1] as string;
      j--;
    }
    keyStack[j] = k;
  }
}

function write(value: JsonValue, w: Walk): void {
  if (typeof value === 'string') sink.string(value);
  else if (value === null) sink.ascii('null');
  else if (value === true) sink.ascii('true');
  else if (value === false) sink.ascii('false');
  else if (value instanceof JsonNumber) {
    const js = es6(value.lexeme);
    const exact = inexactText(value.lexeme, js);
    if (exact !== undefined) w.inexact = true;
    sink.ascii(exact !== undefined && w.mode === 'exact' ? exact : js);
  } else if (Array.isArray(value)) {
    sink.byte(0x5b);
    for (let i = 0; i < value.length; i++) {
      if (i) sink.byte(0x2c);
      write(value[i] as JsonValue, w);
    }
    sink.byte(0x5d);
  } else {
    const base = keyTop;
    pushSortedKeys(value);
    const end = keyTop;
    sink.byte(0x7b);
    for (let i = base; i < end; i++) {
      const k = keyStack[i] as string;
      if (i > base) sink.byte(0x2c);
      sink.string(k);
      sink.byte(0x3a);
      write(value.get(k) as JsonValue, w);
    }
    sink.byte(0x7d);
    keyTop = base;
  }
}

/** The canonical form of `value` as UTF-8, in a view of the writer's buffer: valid until the next call of
 *  anything in this module, so hash or copy it first. Throws CanonicalError as canonicalize does. */
export function canonicalBytes(value: JsonValue, w: Walk): Buffer {
  sink.reset();
  keyTop = 0;
  try {
    write(value, w);
  } finally {
    keyStack.length = 0; // keep no key of the value alive
  }
  return sink.bytes();
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
