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

export class CanonicalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CanonicalError';
  }
}

/** A decimal lexeme reduced to sign, significant digits and exponent: value = sign × digits × 10^exp. The
 *  exponent is decimal text: a lexeme's exponent may have more digits than a double holds exactly. */
function decimal(lexeme: string): { negative: boolean; digits: string; exp: string } {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(lexeme);
  if (!m) throw new CanonicalError(`not a JSON number: ${lexeme}`);
  const intPart = m[2] as string;
  const frac = m[3] ?? '';
  let digits = (intPart + frac).replace(/^0+/, '');
  if (digits === '') return { negative: false, digits: '0', exp: '0' };
  const trimmed = digits.replace(/0+$/, '');
  const shift = digits.length - trimmed.length - frac.length;
  digits = trimmed;
  return { negative: m[1] === '-', digits, exp: addToExponent(m[4] ?? '0', shift) };
}

const EXACT_DIGITS = 15; // a decimal of up to 15 digits, plus or minus a count of lexeme characters, is exact in a double

/** `exp + shift` as decimal text, exactly, in time linear in the length of `exp` (BigInt would be quadratic
 *  on the megabytes of exponent digits a message can hold). `shift` is bounded by the lexeme's length. */
function addToExponent(exp: string, shift: number): string {
  const m = /^([+-]?)0*(\d*)$/.exec(exp) as RegExpExecArray;
  const negative = m[1] === '-';
  const magnitude = (m[2] as string) || '0';
  if (magnitude.length <= EXACT_DIGITS) return String((negative ? -Number(magnitude) : Number(magnitude)) + shift);
  // |exp| >= 10^15 > |shift|: the sign stays, and the magnitude grows or shrinks by |shift|.
  const grows = negative === shift < 0;
  const cut = magnitude.length - EXACT_DIGITS;
  let head = magnitude.slice(0, cut);
  let low = Number(magnitude.slice(cut)) + (grows ? 1 : -1) * Math.abs(shift);
  if (low >= 10 ** EXACT_DIGITS) {
    low -= 10 ** EXACT_DIGITS;
    head = carry(head, 1);
  } else if (low < 0) {
    low += 10 ** EXACT_DIGITS;
    head = carry(head, -1);
  }
  return `${negative ? '-' : ''}${`${head}${String(low).padStart(EXACT_DIGITS, '0')}`.replace(/^0+/, '')}`;
}

/** A non-empty digit string plus or minus one (never below zero: its first digit is not 0). */
function carry(digits: string, by: 1 | -1): string {
  const [from, to] = by === 1 ? ['9', '0'] : ['0', '9'];
  let i = digits.length - 1;
  while (i >= 0 && digits[i] === from) i--;
  if (i < 0) return `1${to.repeat(digits.length)}`; // only when adding: 99…9 + 1
  return `${digits.slice(0, i)}${String(Number(digits[i]) + by)}${to.repeat(digits.length - i - 1)}`;
}

function sameDecimal(a: ReturnType<typeof decimal>, b: ReturnType<typeof decimal>): boolean {
  return a.negative === b.negative && a.digits === b.digits && a.exp === b.exp;
}

/** The ES6 serialization of a number lexeme, refusing values outside the double range. */
function es6(lexeme: string): string {
  const d = Number(lexeme);
  if (!Number.isFinite(d)) throw new CanonicalError(`number ${lexeme.slice(0, 40)} is outside the IEEE-754 double range`);
  return Object.is(d, -0) ? '0' : String(d);
}

const SAFE_INTEGER = /^-?[0-9]{1,15}$/;

/** The exact text of a lexeme whose double would not hold its decimal value, or undefined when it would. */
function inexactText(lexeme: string, js: string): string | undefined {
  if (js === lexeme || SAFE_INTEGER.test(lexeme)) return undefined;
  const exact = decimal(lexeme);
  if (sameDecimal(exact, decimal(js))) return undefined;
  return `${exact.negative ? '-' : ''}${exact.digits}e${exact.exp}`;
}

export interface Walk {
  mode: CanonicalMode;
  /** Set when some number's exact text differs from its RFC 8785 text. */
  inexact: boolean;
}

// What JSON.stringify escapes in a string: '"', '\\', C0 controls, and surrogates when lone (a paired one is
// kept, but any surrogate takes the slow path, where JSON.stringify decides).
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON.stringify writes it (RFC 8785's escaping), without calling it for the common string that
 *  needs no escape. */
export function quote(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** The keys of an object in RFC 8785 order: UTF-16 code units, what `<` on strings and a default sort compare
 *  (keys are distinct, so the order is total). Most objects have a handful of keys: insertion sort needs no
 *  comparator calls or second array for them. A wide object gets the n log n sort (a hostile server can
 *  send 50,000 keys in reverse order). */
export function sortedKeys(obj: ReadonlyMap<string, unknown>): string[] {
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

/** The canonical text of `value`, built by concatenation (V8 joins the pieces once, when the text is read). */
export function canonicalText(value: JsonValue, w: Walk): string {
  if (typeof value === 'string') return quote(value);
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (value instanceof JsonNumber) {
    const js = es6(value.lexeme);
    const exact = inexactText(value.lexeme, js);
    if (exact === undefined) return js;
    w.inexact = true;
    return w.mode === 'exact' ? exact : js;
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i) out += ',';
      out += canonicalText(value[i] as JsonValue, w);
    }
    return out + ']';
  }
  const keys = sortedKeys(value);
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    if (i) out += ',';
    out += quote(k);
    out += ':';
    out += canonicalText(value.get(k) as JsonValue, w);
  }
  return out + '}';
}

/** Canonical text of a lossless JSON value. Throws CanonicalError for a value RFC 8785 cannot transform. */
export function canonicalize(value: JsonValue, mode: CanonicalMode = 'jcs'): string {
  return canonicalText(value, { mode, inexact: false });
}

/** Both canonical texts in one pass when they agree (the common case): `exact` is `jcs` unless a number differs. */
export function canonicalizeBoth(value: JsonValue): { jcs: string; exact: string } {
  const w: Walk = { mode: 'jcs', inexact: false };
  const jcs = canonicalText(value, w);
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
