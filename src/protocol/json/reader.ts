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

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Parses one JSON text. Throws JsonReadError; never returns a partial value. */
export function readJson(input: Uint8Array | string, limits: ReadLimits = DEFAULT_READ_LIMITS, capture?: ReadCapture): JsonValue {
  let text: string;
  if (typeof input === 'string') {
    text = input;
    if (Buffer.byteLength(text, 'utf8') > limits.maxBytes) {
      throw new JsonReadError('too_large', `input exceeds ${limits.maxBytes} bytes`, 0, 1, 1);
    }
  } else {
    if (input.byteLength > limits.maxBytes) {
      throw new JsonReadError('too_large', `input exceeds ${limits.maxBytes} bytes`, 0, 1, 1);
    }
    try {
      text = utf8.decode(input);
    } catch {
      throw new JsonReadError('invalid_utf8', 'invalid UTF-8', 0, 1, 1);
    }
  }
  const reader = new Reader(text, limits.maxDepth);
  const value = reader.document();
  if (capture && reader.idSpan) {
    const [s, e] = reader.idSpan;
    capture.idSpan = typeof input === 'string' ? [s, e] : byteSpan(text, input.byteLength, s, e);
  }
  return value;
}

/** Byte offsets of text offsets [s, e) in its UTF-8 encoding, counting from the nearer end of the text. */
function byteSpan(text: string, byteLength: number, s: number, e: number): [number, number] {
  const inner = Buffer.byteLength(text.slice(s, e));
  if (s <= text.length - e) {
    const start = Buffer.byteLength(text.slice(0, s));
    return [start, start + inner];
  }
  const end = byteLength - Buffer.byteLength(text.slice(e));
  return [end - inner, end];
}

const NUMBER_RE = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

class Reader {
  private pos = 0;
  private depth = 0;
  /** Text offsets of the top-level member "id" value, when the document is an object that has one. */
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

  private value(path: string[]): JsonValue {
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

  private object(path: string[]): JsonObject {
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

  private array(path: string[]): JsonValue[] {
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
      path.push(String(out.length));
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
    const text = this.text;
    let i = this.pos + 1;
    let out = '';
    let runStart = i;
    for (;;) {
      if (i >= text.length) {
        this.pos = i;
        this.fail('syntax', 'unterminated string');
      }
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(runStart, i);
        this.pos = i + 1;
        return checkSurrogates(out, this, runStart);
      }
      if (c < 0x20) {
        this.pos = i;
        this.fail('syntax', 'unescaped control character in string');
      }
      if (c === 0x5c) {
        out += text.slice(runStart, i);
        const e = text.charCodeAt(i + 1);
        switch (e) {
          case 0x22: out += '"'; break;
          case 0x5c: out += '\\'; break;
          case 0x2f: out += '/'; break;
          case 0x62: out += '\b'; break;
          case 0x66: out += '\f'; break;
          case 0x6e: out += '\n'; break;
          case 0x72: out += '\r'; break;
          case 0x74: out += '\t'; break;
          case 0x75: {
            const hex = text.slice(i + 2, i + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
              this.pos = i;
              this.fail('syntax', 'invalid \\u escape');
            }
            out += String.fromCharCode(parseInt(hex, 16));
            i += 4;
            break;
          }
          default:
            this.pos = i;
            this.fail('syntax', 'invalid escape');
        }
        i += 2;
        runStart = i;
        continue;
      }
      i++;
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

  fail(kind: JsonReadErrorKind, detail: string, at = this.pos): never {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < at && i < this.text.length; i++) {
      if (this.text.charCodeAt(i) === 0x0a) {
        line++;
        lineStart = i + 1;
      }
    }
    throw new JsonReadError(kind, detail, at, line, at - lineStart + 1);
  }
}

function checkSurrogates(s: string, reader: Reader, at: number): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const n = s.charCodeAt(i + 1);
      if (n >= 0xdc00 && n <= 0xdfff) {
        i++;
        continue;
      }
      reader.fail('lone_surrogate', 'lone surrogate in string', at);
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      reader.fail('lone_surrogate', 'lone surrogate in string', at);
    }
  }
  return s;
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
