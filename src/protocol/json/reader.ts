import { isAscii, isUtf8 } from 'node:buffer';
import { asciiString, closingQuote, readEscaped, StringFault } from './string.js';

// A lossless JSON reader over received bytes. Unlike JSON.parse it keeps each number's lexeme (so
// 9007199254740993 survives), refuses duplicate keys (a parser differential: the server and the warden must
// not read different values), refuses invalid UTF-8 and lone surrogates, and bounds depth and size.

/** A JSON number as its exact lexeme from the wire. */
export class JsonNumber {
  constructor(readonly lexeme: string) {}
}

export type JsonObject = Map<string, JsonValue>;
export type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | JsonObject;

export interface ReadLimits {
  /** Largest input accepted, in bytes. */
  maxBytes: number;
  /** Deepest nesting of arrays and objects accepted. */
  maxDepth: number;
}

/** Filled in by readJson when given: where the top-level member "id" of an object sits, as byte offsets into
 *  the input [start, end) of its value (so a relay can replace the id and keep every other byte). */
export interface ReadCapture {
  idSpan?: [number, number];
}

export const DEFAULT_READ_LIMITS: ReadLimits = { maxBytes: 16 * 1024 * 1024, maxDepth: 64 };

export type JsonReadErrorKind =
  | 'too_large'
  | 'invalid_utf8'
  | 'syntax'
  | 'duplicate_key'
  | 'lone_surrogate'
  | 'too_deep';

/** Why the input is not admissible JSON, with where (0-based character offset, 1-based line and column). */
export class JsonReadError extends Error {
  constructor(
    readonly kind: JsonReadErrorKind,
    readonly detail: string,
    readonly offset: number,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${detail} at line ${line} column ${column}`);
    this.name = 'JsonReadError';
  }
}

/** Parses one JSON text. Throws JsonReadError; never returns a partial value. */
export function readJson(input: Uint8Array | string, limits: ReadLimits = DEFAULT_READ_LIMITS, capture?: ReadCapture): JsonValue {
  let reader: Reader;
  if (typeof input === 'string') {
    if (Buffer.byteLength(input, 'utf8') > limits.maxBytes) {
      throw new JsonReadError('too_large', `input exceeds ${limits.maxBytes} bytes`, 0, 1, 1);
    }
    reader = new Reader(input, undefined, limits.maxDepth);
  } else {
    if (input.byteLength > limits.maxBytes) {
      throw new JsonReadError('too_large', `input exceeds ${limits.maxBytes} bytes`, 0, 1, 1);
    }
    // The same bytes a fatal TextDecoder refuses (invalid sequences, overlongs, surrogates, beyond U+10FFFF).
    if (!isUtf8(input)) throw new JsonReadError('invalid_utf8', 'invalid UTF-8', 0, 1, 1);
    const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    reader = new Reader(bytes.toString('latin1'), bytes, limits.maxDepth);
  }
  const value = reader.document();
  // In the input's own units: text offsets for a string, byte offsets for bytes.
  if (capture && reader.idSpan) capture.idSpan = reader.idSpan;
  return value;
}

/** A run of string characters the reader takes as they are (sticky; matches the empty run too). */
const PLAIN_RUN = /[^"\\\u0000-\u001f\ud800-\udfff]*/y;
/** The same over the latin1 view of bytes, where only ASCII is itself (a byte from 0x80 is part of a
 *  multibyte character, decoded on the slow path). */
const ASCII_RUN = /[^"\\\u0000-\u001f\u0080-\uffff]*/y;

/** From this many bytes on, a string's run is checked in the bytes (plainAscii) before the regular expression
 *  (below it the regular expression is as fast: a listing's descriptions stay on it). */
export const LONG_RUN = 4096;

/** True when `b` holds only ASCII bytes from 0x20 that are neither '"' nor a backslash (a string's plain run). */
export function plainAscii(b: Buffer): boolean {
  if (!isAscii(b) || b.indexOf(0x5c) >= 0 || b.indexOf(0x22) >= 0) return false;
  // No byte below 0x20: with every byte below 0x80, adding 0x60 to each byte of a 32-bit word carries into
  // no other byte and sets a byte's top bit exactly when that byte is from 0x20. The words are ANDed together,
  // eight at a time, and the top bits looked at once at the end (a branch a word cost twice as much).
  const n = b.length;
  let i = 0;
  const head = Math.min(n, (4 - (b.byteOffset & 3)) & 3);
  for (; i < head; i++) if ((b[i] as number) < 0x20) return false;
  const words = (n - i) >>> 2;
  const top = 0x80808080 | 0;
  let all = -1;
  if (words > 0) {
    const w = new Int32Array(b.buffer, b.byteOffset + i, words);
    const add = 0x60606060;
    let k = 0;
    for (; k + 8 <= words; k += 8) {
      all &=
        ((w[k] as number) + add) & ((w[k + 1] as number) + add) & ((w[k + 2] as number) + add) & ((w[k + 3] as number) + add) &
        ((w[k + 4] as number) + add) & ((w[k + 5] as number) + add) & ((w[k + 6] as number) + add) & ((w[k + 7] as number) + add);
    }
    for (; k < words; k++) all &= (w[k] as number) + add;
    i += words * 4;
  }
  for (; i < n; i++) if ((b[i] as number) < 0x20) return false;
  return (all & top) === top;
}

const NUMBER_RE = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

// The reader reads a string input as it is, and bytes through their latin1 view: one character per byte,
// so that positions are byte offsets, and a string of plain ASCII is a slice of a one-byte string (a slice of
// decoded UTF-16 text would be two-byte whenever the input holds one character beyond Latin-1, and every
// later copy, canonical text and digest of it would pay for that). A string with any other byte is decoded
// from the bytes (validated up front). Refusals report offsets, lines and columns in characters of the
// decoded text either way.
class Reader {
  private pos = 0;
  private depth = 0;
  private readonly plainRun: RegExp;
  /** Offsets (the input's units) of the top-level member "id" value, when the document is an object that has one. */
  idSpan: [number, number] | undefined;

  /** `text` is the input, or the latin1 view of `bytes`. */
  constructor(
    private readonly text: string,
    private readonly bytes: Buffer | undefined,
    private readonly maxDepth: number,
  ) {
    this.plainRun = bytes ? ASCII_RUN : PLAIN_RUN;
  }

  document(): JsonValue {
    this.skipWs();
    const value = this.value([]);
    this.skipWs();
    if (this.pos !== this.text.length) this.fail('syntax', 'unexpected content after the JSON value');
    return value;
  }

  private value(path: (string | number)[]): JsonValue {
    const c = this.text.charCodeAt(this.pos);
    switch (c) {
      case 0x7b: // {
        return this.object(path);
      case 0x5b: // [
        return this.array(path);
      case 0x22: // "
        return this.string();
      case 0x74: // t
        return this.literal('true', true);
      case 0x66: // f
        return this.literal('false', false);
      case 0x6e: // n
        return this.literal('null', null);
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
        return this.fail('syntax', this.pos >= this.text.length ? 'unexpected end of input' : 'unexpected character');
    }
  }

  private object(path: (string | number)[]): JsonObject {
    this.enter();
    this.pos++;
    const out: JsonObject = new Map();
    this.skipWs();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      this.depth--;
      return out;
    }
    for (;;) {
      this.skipWs();
      if (this.text.charCodeAt(this.pos) !== 0x22) this.fail('syntax', 'expected a string key');
      const keyStart = this.pos;
      const key = this.string();
      if (out.has(key)) {
        this.pos = keyStart;
        this.fail('duplicate_key', `duplicate key "${printable(key)}" in object at ${pointer(path)}`);
      }
      this.skipWs();
      if (this.text.charCodeAt(this.pos) !== 0x3a) this.fail('syntax', 'expected ":"');
      this.pos++;
      this.skipWs();
      path.push(key);
      const valueStart = this.pos;
      out.set(key, this.value(path));
      path.pop();
      if (key === 'id' && this.depth === 1) this.idSpan = [valueStart, this.pos];
      this.skipWs();
      const c = this.text.charCodeAt(this.pos);
      if (c === 0x2c) {
        this.pos++;
        continue;
      }
      if (c === 0x7d) {
        this.pos++;
        this.depth--;
        return out;
      }
      this.fail('syntax', 'expected "," or "}"');
    }
  }

  private array(path: (string | number)[]): JsonValue[] {
    this.enter();
    this.pos++;
    const out: JsonValue[] = [];
    this.skipWs();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      this.depth--;
      return out;
    }
    for (;;) {
      this.skipWs();
      path.push(out.length); // a number: pointer() makes it text only when a message needs it
      out.push(this.value(path));
      path.pop();
      this.skipWs();
      const c = this.text.charCodeAt(this.pos);
      if (c === 0x2c) {
        this.pos++;
        continue;
      }
      if (c === 0x5d) {
        this.pos++;
        this.depth--;
        return out;
      }
      this.fail('syntax', 'expected "," or "]"');
    }
  }

  private string(): string {
    // Most strings are a plain run: one native scan finds their end, and the slice is the value (what
    // readEscaped would return, with nothing for it to refuse).
    const start = this.pos + 1;
    if (this.bytes && this.text.length - start > LONG_RUN) {
      // A long run (a tool's result text) is found faster in the bytes: the first '"' after the opening one
      // closes the string when nothing before it is a backslash, a control character or a byte from 0x80 —
      // exactly the run the sticky scan below would take, checked by native scans instead of a regular
      // expression over every character (docs/performance.md, issue 13: 1 MiB results).
      const end = this.text.indexOf('"', start); // in the latin1 view: the same offset as in the bytes
      if (end - start >= LONG_RUN && plainAscii(this.bytes.subarray(start, end))) {
        this.pos = end + 1;
        return this.text.slice(start, end);
      }
    }
    const run = this.plainRun;
    run.lastIndex = start;
    run.test(this.text);
    const end = run.lastIndex;
    if (this.text.charCodeAt(end) === 0x22) {
      this.pos = end + 1;
      return this.text.slice(start, end);
    }
    // Escapes (or, in a string input, a surrogate). Bytes are read as they are when they are all ASCII.
    if (!this.bytes || asciiString(this.text, start)) {
      try {
        const r = readEscaped(this.text, start);
        this.pos = r.end;
        return r.value;
      } catch (err) {
        if (err instanceof StringFault) this.fail(err.kind, err.detail, err.at);
        throw err;
      }
    }
    // Decode the string's bytes (to its closing quote, or to the end of the input) and read that.
    const close = closingQuote(this.text, start);
    const src = this.bytes.toString('utf8', start, Math.min(close + 1, this.text.length));
    try {
      const r = readEscaped(src, 0);
      this.pos = close + 1;
      return r.value;
    } catch (err) {
      if (err instanceof StringFault) this.failAt(err.kind, err.detail, this.charsBefore(start) + err.at);
      throw err;
    }
  }

  private number(): JsonNumber {
    NUMBER_RE.lastIndex = this.pos;
    const m = NUMBER_RE.exec(this.text);
    if (!m) return this.fail('syntax', 'invalid number');
    this.pos += m[0].length;
    return new JsonNumber(m[0]);
  }

  private literal<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail('syntax', 'unexpected character');
    this.pos += word.length;
    return value;
  }

  private skipWs(): void {
    const text = this.text;
    let i = this.pos;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.pos = i;
  }

  private enter(): void {
    if (++this.depth > this.maxDepth) this.fail('too_deep', `nesting deeper than ${this.maxDepth}`);
  }

  /** Refuses at `at`, in the reader's units (bytes when reading bytes). */
  private fail(kind: JsonReadErrorKind, detail: string, at = this.pos): never {
    return this.failAt(kind, detail, this.bytes ? this.charsBefore(at) : at);
  }

  /** Characters of the decoded text before byte offset `at` (always the start of a character). */
  private charsBefore(at: number): number {
    return (this.bytes as Buffer).toString('utf8', 0, at).length;
  }

  /** Refuses at a character offset of the decoded text. */
  private failAt(kind: JsonReadErrorKind, detail: string, at: number): never {
    const text = this.bytes ? this.bytes.toString('utf8') : this.text;
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < at && i < text.length; i++) {
      if (text.charCodeAt(i) === 0x0a) {
        line++;
        lineStart = i + 1;
      }
    }
    throw new JsonReadError(kind, detail, at, line, at - lineStart + 1);
  }
}

/** RFC 6901 JSON pointer for a path of keys. */
export function pointer(path: readonly (string | number)[]): string {
  if (path.length === 0) return '/';
  return path.map((p) => '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

function printable(s: string): string {
  const cut = s.length > 64 ? s.slice(0, 64) + '…' : s;
  return JSON.stringify(cut).slice(1, -1);
}

/** Converts a lossless value to plain JS values (numbers become doubles). For trusted local config only. */
export function toPlain(value: JsonValue): unknown {
  if (value instanceof JsonNumber) return Number(value.lexeme);
  if (Array.isArray(value)) return value.map(toPlain);
  if (value instanceof Map) {
    return Object.fromEntries([...value].map(([k, v]) => [k, toPlain(v)]));
  }
  return value;
}
