// Numbers in canonical form: the RFC 8785 (ES6 double) text of a lexeme, and, for the warden's exact mode,
// the exact text of a lexeme whose double would not hold its decimal value.

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
  const trimmed = withoutTrailingZeros(digits);
  const shift = digits.length - trimmed.length - frac.length;
  digits = trimmed;
  return { negative: m[1] === '-', digits, exp: addToExponent(m[4] ?? '0', shift) };
}

/** `digits` without its trailing zeros. Not `replace(/0+$/)`: V8 retries that match at every zero of a run
 *  that a later digit ends, quadratic on a lexeme of megabytes (1.000…0001; test/attack12/long-number). */
function withoutTrailingZeros(digits: string): string {
  let end = digits.length;
  while (end > 0 && digits.charCodeAt(end - 1) === 0x30) end--;
  return digits.slice(0, end);
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
export function es6(lexeme: string): string {
  const d = Number(lexeme);
  if (!Number.isFinite(d)) throw new CanonicalError(`number ${lexeme.slice(0, 40)} is outside the IEEE-754 double range`);
  return Object.is(d, -0) ? '0' : String(d);
}

const SAFE_INTEGER = /^-?[0-9]{1,15}$/;

/** The exact text of a lexeme whose double would not hold its decimal value, or undefined when it would. */
export function inexactText(lexeme: string, js: string): string | undefined {
  if (js === lexeme || SAFE_INTEGER.test(lexeme)) return undefined;
  const exact = decimal(lexeme);
  if (sameDecimal(exact, decimal(js))) return undefined;
  return `${exact.negative ? '-' : ''}${exact.digits}e${exact.exp}`;
}
