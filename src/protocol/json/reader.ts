import { isAscii, isUtf8 } from 'node:buffer';
import { ByteReader } from './byte-reader.js';
import { JsonNumber, JsonReadError, DEFAULT_READ_LIMITS, refusal, type JsonValue, type ReadCapture, type ReadLimits } from './value.js';

// A lossless JSON reader over received bytes. Unlike JSON.parse it keeps each number's lexeme (so
// 9007199254740993 survives), refuses duplicate keys (a parser differential: the server and the warden must
// not read different values), refuses invalid UTF-8 and lone surrogates, and bounds depth and size. It reads
// bytes (byte-reader.ts); a string is read as its UTF-8 bytes.

export { DEFAULT_READ_LIMITS, fillDeferred, JsonNumber, JsonReadError, pointer } from './value.js';
export type { DeferredString, JsonObject, JsonReadErrorKind, JsonValue, ReadCapture, ReadLimits } from './value.js';
export { LONG_RUN, plainAscii } from './plain-run.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Parses one JSON text. Throws JsonReadError; never returns a partial value. */
export function readJson(input: Uint8Array | string, limits: ReadLimits = DEFAULT_READ_LIMITS, capture?: ReadCapture): JsonValue {
  if (typeof input === 'string') {
    // A string is read as its UTF-8 bytes; one that has no UTF-8 form (a lone surrogate) is refused, never replaced.
    const lone = input.search(LONE_SURROGATE);
    if (lone >= 0) throw refusal('lone_surrogate', 'a lone surrogate in the input', input, lone);
    return readJson(Buffer.from(input, 'utf8'), limits, capture);
  }
  if (input.byteLength > limits.maxBytes) {
    throw new JsonReadError('too_large', `input exceeds ${limits.maxBytes} bytes`, 0, 1, 1);
  }
  // The same bytes a fatal TextDecoder refuses (invalid sequences, overlongs, surrogates, beyond U+10FFFF).
  // ASCII is valid UTF-8; isAscii stops at the first other byte, and the reader then need not look again.
  const ascii = isAscii(input);
  if (!ascii && !isUtf8(input)) throw new JsonReadError('invalid_utf8', 'invalid UTF-8', 0, 1, 1);
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const reader = new ByteReader(bytes, limits.maxDepth, capture?.defer === true, ascii);
  const value = reader.document();
  if (capture) {
    if (reader.idSpan) capture.idSpan = reader.idSpan; // byte offsets
    if (reader.deferred) capture.deferred = reader.deferred;
    if (reader.carriageReturn >= 0) capture.carriageReturn = reader.carriageReturn;
  }
  return value;
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
