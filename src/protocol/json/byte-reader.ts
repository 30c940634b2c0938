import { isAscii } from 'node:buffer';
import { LONG_RUN, noControl } from './plain-run.js';
import { plainInWasm } from './plain-scan.js';
import { readEscaped, StringFault } from './string.js';
import { JsonNumber, pointer, printable, refusal, type DeferredString, type JsonObject, type JsonReadErrorKind, type JsonValue } from './value.js';

// The reader of UTF-8 bytes (validated before: isUtf8). It walks the bytes themselves: positions are byte
// offsets, and no string of the whole input is made unless the input holds many strings. A string of plain
// ASCII is its bytes as a one-byte string (latin1): from the bytes while it is one of the first VIEW_AFTER,
// then from a latin1 view of the whole input made once (one native slice per string costs more than one copy
// of a listing). A string with any other byte, or an escape, is decoded from its bytes and read as text.
// Refusals report offsets, lines and columns in characters of the decoded text, as reading the text would
// (the text reader of test/helpers/text-reader.ts, the oracle: reader-bytes and byte-reader tests hold the two
// to the same outcome on every input).
// With `defer`, a long plain string below the top level's members is checked and left out (value.ts).

/** Strings sliced one by one from the bytes before the reader makes the latin1 view of the whole input. */
const VIEW_AFTER = 64;

export class ByteReader {
  private pos = 0;
  private depth = 0;
  private readonly n: number;
  private view: string | undefined;
  private sliced = 0;
  /** The span of the string value just read, when it was deferred (its container lists it). */
  private pending: [number, number] | undefined;
  /** Offsets of the top-level member "id" value, when the document is an object that has one. */
  idSpan: [number, number] | undefined;
  /** The offset of the first carriage return (0x0D) read as whitespace; -1 when there is none. */
  carriageReturn = -1;
  deferred: DeferredString[] | undefined;

  constructor(
    private readonly b: Buffer,
    private readonly maxDepth: number,
    private readonly defer: boolean,
    /** Every byte of the input is below 0x80 (known from the UTF-8 check). */
    private readonly ascii: boolean,
  ) {
    this.n = b.length;
    // A short input cannot hold a long string: its view costs less than slicing its strings one by one.
    if (this.n <= LONG_RUN) this.view = b.toString('latin1');
  }

  document(): JsonValue {
    this.skipWs();
    const value = this.value([]);
    this.skipWs();
    if (this.pos !== this.n) this.fail('syntax', 'unexpected content after the JSON value');
    return value;
  }

  private value(path: (string | number)[]): JsonValue {
    const c = this.b[this.pos];
    switch (c) {
      case 0x7b: // {
        return this.object(path);
      case 0x5b: // [
        return this.array(path);
      case 0x22: // "
        return this.string(this.defer && this.depth >= 2);
      case 0x74: // t
        return this.literal(TRUE, true);
      case 0x66: // f
        return this.literal(FALSE, false);
      case 0x6e: // n
        return this.literal(NULL, null);
      default:
        if (c !== undefined && (c === 0x2d || (c >= 0x30 && c <= 0x39))) return this.number();
        return this.fail('syntax', this.pos >= this.n ? 'unexpected end of input' : 'unexpected character');
    }
  }

  private object(path: (string | number)[]): JsonObject {
    this.enter();
    this.pos++;
    const out: JsonObject = new Map();
    this.skipWs();
    if (this.b[this.pos] === 0x7d) {
      this.pos++;
      this.depth--;
      return out;
    }
    for (;;) {
      this.skipWs();
      if (this.b[this.pos] !== 0x22) this.fail('syntax', 'expected a string key');
      const keyStart = this.pos;
      const key = this.string(false);
      if (out.has(key)) {
        this.pos = keyStart;
        // The pointer is the sender's member names: cut and escaped like the key (it may reach the client).
        this.fail('duplicate_key', `duplicate key "${printable(key)}" in object at ${printable(pointer(path))}`);
      }
      this.skipWs();
      if (this.b[this.pos] !== 0x3a) this.fail('syntax', 'expected ":"');
      this.pos++;
      this.skipWs();
      path.push(key);
      const valueStart = this.pos;
      out.set(key, this.value(path));
      if (this.pending) this.deferIn(out, key);
      path.pop();
      if (key === 'id' && this.depth === 1) this.idSpan = [valueStart, this.pos];
      this.skipWs();
      const c = this.b[this.pos];
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
    if (this.b[this.pos] === 0x5d) {
      this.pos++;
      this.depth--;
      return out;
    }
    for (;;) {
      this.skipWs();
      path.push(out.length); // a number: pointer() makes it text only when a message needs it
      out.push(this.value(path));
      if (this.pending) this.deferIn(out, out.length - 1);
      path.pop();
      this.skipWs();
      const c = this.b[this.pos];
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

  private deferIn(container: JsonObject | JsonValue[], at: string | number): void {
    const [start, end] = this.pending as [number, number];
    this.pending = undefined;
    (this.deferred ??= []).push({ in: container, at, start, end });
  }

  /** A string (the reader at its opening quote); `deferrable`: a long plain one may be left out (pending). */
  private string(deferrable: boolean): string {
    const b = this.b;
    const n = this.n;
    const start = this.pos + 1;
    if (n - start > LONG_RUN) {
      // A long run (a tool's result text): the first '"' after the opening one closes the string when nothing
      // before it is a backslash, a control character or a byte from 0x80 (docs/adr/0026-bulk-relay.md).
      // (plainAscii: one SIMD pass, or, without WebAssembly, the JavaScript test without the scans already made:
      // no '"' before `end`, and ASCII if the whole input is.)
      const end = b.indexOf(0x22, start);
      const run = end - start >= LONG_RUN ? b.subarray(start, end) : undefined;
      if (run && (plainInWasm(run) ?? ((this.ascii || isAscii(run)) && run.indexOf(0x5c) < 0 && noControl(run)))) {
        this.pos = end + 1;
        if (deferrable && this.view === undefined) {
          this.pending = [start, end];
          return '';
        }
        return this.slice(start, end);
      }
    }
    let i = start;
    while (i < n) {
      const c = b[i] as number;
      if (c === 0x22 || c === 0x5c || c < 0x20 || c >= 0x80) break;
      i++;
    }
    if (b[i] === 0x22) {
      this.pos = i + 1;
      return this.slice(start, i);
    }
    // Escapes, other bytes, or a refusal: read the string's text (to its closing quote, or to the end of the
    // input): from the view when it is ASCII, else decoded from its bytes.
    const close = closingQuote(b, i);
    if (this.view !== undefined && asciiUpTo(b, i, close)) {
      try {
        const r = readEscaped(this.view, start);
        this.pos = r.end;
        return r.value;
      } catch (err) {
        if (err instanceof StringFault) this.fail(err.kind, err.detail, err.at);
        throw err;
      }
    }
    const src = b.toString('utf8', start, Math.min(close + 1, n));
    try {
      const r = readEscaped(src, 0);
      this.pos = close + 1;
      return r.value;
    } catch (err) {
      if (err instanceof StringFault) this.failAt(err.kind, err.detail, this.charsBefore(start) + err.at);
      throw err;
    }
  }

  /** The ASCII bytes [start, end) as a string. */
  private slice(start: number, end: number): string {
    let view = this.view;
    if (view === undefined) {
      if (++this.sliced <= VIEW_AFTER) return this.b.toString('latin1', start, end);
      view = this.view = this.b.toString('latin1');
    }
    return view.slice(start, end);
  }

  /** -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, the longest match at the reader's position. */
  private number(): JsonNumber {
    const b = this.b;
    const start = this.pos;
    let i = start;
    if (b[i] === 0x2d) i++;
    if (b[i] === 0x30) i++;
    else if (digit(b[i])) while (digit(b[++i]));
    else return this.fail('syntax', 'invalid number');
    if (b[i] === 0x2e && digit(b[i + 1])) {
      i += 2;
      while (digit(b[i])) i++;
    }
    if (b[i] === 0x65 || b[i] === 0x45) {
      let j = i + 1;
      if (b[j] === 0x2b || b[j] === 0x2d) j++;
      if (digit(b[j])) {
        i = j + 1;
        while (digit(b[i])) i++;
      }
    }
    this.pos = i;
    return new JsonNumber(this.slice(start, i));
  }

  private literal<T>(word: readonly number[], value: T): T {
    const b = this.b;
    const at = this.pos;
    for (let k = 0; k < word.length; k++) if (b[at + k] !== word[k]) this.fail('syntax', 'unexpected character');
    this.pos += word.length;
    return value;
  }

  private skipWs(): void {
    const b = this.b;
    let i = this.pos;
    for (;;) {
      const c = b[i];
      if (c === 0x20 || c === 0x0a || c === 0x09) i++;
      else if (c === 0x0d) {
        if (this.carriageReturn < 0) this.carriageReturn = i;
        i++;
      } else break;
    }
    this.pos = i;
  }

  private enter(): void {
    if (++this.depth > this.maxDepth) this.fail('too_deep', `nesting deeper than ${this.maxDepth}`);
  }

  /** Refuses at byte offset `at`. */
  private fail(kind: JsonReadErrorKind, detail: string, at = this.pos): never {
    return this.failAt(kind, detail, this.charsBefore(at));
  }

  /** Characters of the decoded text before byte offset `at` (always the start of a character). */
  private charsBefore(at: number): number {
    return this.b.toString('utf8', 0, at).length;
  }

  /** Refuses at a character offset of the decoded text. */
  private failAt(kind: JsonReadErrorKind, detail: string, at: number): never {
    throw refusal(kind, detail, this.b.toString('utf8'), at);
  }
}

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

function asciiUpTo(b: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if ((b[i] as number) >= 0x80) return false;
  return true;
}

function digit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** Where the string whose content reaches `from` (not inside an escape) closes: the first '"' not escaped, or
 *  the end of the bytes. A byte of a multibyte character is never '"' or a backslash. */
function closingQuote(b: Buffer, from: number): number {
  const n = b.length;
  for (let i = from; i < n; i++) {
    const c = b[i];
    if (c === 0x22) return i;
    if (c === 0x5c) i++;
  }
  return n;
}
