import { readEscaped, StringFault } from '../../src/protocol/json/string.js';
import { JsonNumber, JsonReadError, pointer, printable, refusal, type JsonObject, type JsonReadErrorKind, type JsonValue, type ReadCapture, type ReadLimits } from '../../src/protocol/json/value.js';

// The oracle of the lossless reader: the reader of a JSON text given as a string, the algorithm mcp-warden used
// before it read bytes (src/protocol/json/byte-reader.ts must agree with it on every input:
// test/protocol/reader-bytes.test.ts, byte-reader.test.ts). Offsets are UTF-16 code units of the text.

/** A run of string characters the reader takes as they are (sticky; matches the empty run too). */
const PLAIN_RUN = /[^"\\\u0000-\u001f\ud800-\udfff]*/y;

const NUMBER_RE = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

export class TextReader {
  private pos = 0;
  private depth = 0;
  /** Offsets of the top-level member "id" value, when the document is an object that has one. */
  idSpan: [number, number] | undefined;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

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
    PLAIN_RUN.lastIndex = start;
    PLAIN_RUN.test(this.text);
    const end = PLAIN_RUN.lastIndex;
    if (this.text.charCodeAt(end) === 0x22) {
      this.pos = end + 1;
      return this.text.slice(start, end);
    }
    // Escapes, a surrogate, or a refusal.
    try {
      const r = readEscaped(this.text, start);
      this.pos = r.end;
      return r.value;
    } catch (err) {
      if (err instanceof StringFault) this.fail(err.kind, err.detail, err.at);
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

  private fail(kind: JsonReadErrorKind, detail: string, at = this.pos): never {
    throw refusal(kind, detail, this.text, at);
  }
}

/** readJson of a string as it was: the text read as text (a captured id span in text offsets). */
export function readText(input: string, limits: ReadLimits, capture?: ReadCapture): JsonValue {
  if (Buffer.byteLength(input, 'utf8') > limits.maxBytes) throw new JsonReadError('too_large', `input exceeds ${limits.maxBytes} bytes`, 0, 1, 1);
  const reader = new TextReader(input, limits.maxDepth);
  const value = reader.document();
  if (capture && reader.idSpan) capture.idSpan = reader.idSpan;
  return value;
}
