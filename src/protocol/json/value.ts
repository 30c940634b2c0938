// The values, limits and refusals of the lossless JSON reader (reader.ts reads text, byte-reader.ts bytes).

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

/** A string the byte reader left out of the value for now (ReadCapture.defer): `in` holds '' at `at` until
 *  fillDeferred puts the string of the input's bytes [start, end) there. */
export interface DeferredString {
  in: JsonObject | JsonValue[];
  at: string | number;
  start: number;
  end: number;
}

/** Filled in by readJson when given: where the top-level member "id" of an object sits, as offsets into the
 *  input [start, end) of its value (so a relay can replace the id and keep every other byte). */
export interface ReadCapture {
  idSpan?: [number, number];
  /** Set by the caller (bytes only): a long plain string below the top level's members (a tool's result text)
   *  is checked as always but not made into a string yet; it is listed in `deferred`, and the value is not to
   *  be used before fillDeferred(capture, bytes) has put those strings in. */
  defer?: boolean;
  deferred?: DeferredString[];
  /** The offset of the first carriage return in the input (one can only be whitespace in a JSON text). */
  carriageReturn?: number;
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

/** The refusal at character offset `at` of the decoded text, with its line and column. */
export function refusal(kind: JsonReadErrorKind, detail: string, text: string, at: number): JsonReadError {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < at && i < text.length; i++) {
    if (text.charCodeAt(i) === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return new JsonReadError(kind, detail, at, line, at - lineStart + 1);
}

/** RFC 6901 JSON pointer for a path of keys. */
export function pointer(path: readonly (string | number)[]): string {
  if (path.length === 0) return '/';
  return path.map((p) => '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

/** A key as a refusal shows it: cut at 64 characters, in JSON string syntax. Whoever prints the refusal escapes
 *  the rest with the one escaper (src/escape.ts; protocol/ imports nothing else of src/). */
export function printable(s: string): string {
  const cut = s.length > 64 ? s.slice(0, 64) + '…' : s;
  return JSON.stringify(cut).slice(1, -1);
}

/** Puts the strings a read with `defer` left out into the value (once; later calls do nothing). */
export function fillDeferred(capture: ReadCapture, bytes: Buffer): void {
  const list = capture.deferred;
  if (!list) return;
  capture.deferred = undefined;
  for (const d of list) {
    const s = bytes.toString('latin1', d.start, d.end);
    if (d.in instanceof Map) d.in.set(d.at as string, s);
    else d.in[d.at as number] = s;
  }
}
