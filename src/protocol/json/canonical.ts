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

/** A decimal lexeme reduced to sign, significant digits and exponent: value = sign × digits × 10^exp. */
function decimal(lexeme: string): { negative: boolean; digits: string; exp: number } {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(lexeme);
  if (!m) throw new CanonicalError(`not a JSON number: ${lexeme}`);
  const intPart = m[2] as string;
  const frac = m[3] ?? '';
  let digits = (intPart + frac).replace(/^0+/, '');
  let exp = Number(m[4] ?? '0') - frac.length;
  if (digits === '') return { negative: false, digits: '0', exp: 0 };
  const trimmed = digits.replace(/0+$/, '');
  exp += digits.length - trimmed.length;
  digits = trimmed;
  return { negative: m[1] === '-', digits, exp };
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

function numberText(n: JsonNumber, mode: CanonicalMode): string {
  const js = es6(n.lexeme);
  if (mode === 'jcs') return js;
  const exact = decimal(n.lexeme);
  if (sameDecimal(exact, decimal(js))) return js;
  return `${exact.negative ? '-' : ''}${exact.digits}e${exact.exp}`;
}

/** Canonical text of a lossless JSON value. Throws CanonicalError for a value RFC 8785 cannot transform. */
export function canonicalize(value: JsonValue, mode: CanonicalMode = 'jcs'): string {
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'string') return JSON.stringify(value);
  if (value instanceof JsonNumber) return numberText(value, mode);
  if (Array.isArray(value)) return `[${value.map((v) => canonicalize(v, mode)).join(',')}]`;
  const keys = [...value.keys()].sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalize(value.get(k) as JsonValue, mode)}`).join(',')}}`;
}

/** Builds a lossless value from plain JS data the warden made itself (never from wire bytes). */
export function fromPlain(v: unknown): JsonValue {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return new JsonNumber(String(v));
  if (Array.isArray(v)) return v.map(fromPlain);
  if (typeof v === 'object') return new Map(Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).map(([k, x]) => [k, fromPlain(x)]));
  throw new CanonicalError(`cannot represent ${typeof v} in JSON`);
}
