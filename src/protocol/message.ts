import { caseVariant, foldedNames } from './fold.js';
import { printable } from './json/value.js';
import type { Line } from './line.js';
import { fillDeferred, JsonNumber, JsonReadError, readJson, type JsonValue, type ReadCapture, type ReadLimits } from './json/reader.js';

// Classifying one JSON-RPC line without re-serializing it: its kind, method, and id as the exact JSON text
// it arrived as (so an id of 9007199254740993 is answered with those digits), with the byte span of that id in
// the line, so that a relay can give the message another id and leave every other byte as it was.

/** Byte offsets [start, end) of the id's value in the line. */
export type IdSpan = [number, number];

export type Classified =
  | { kind: 'request'; method: string; id: string; idSpan: IdSpan; value: Map<string, JsonValue> }
  | { kind: 'notification'; method: string; value: Map<string, JsonValue> }
  | { kind: 'response'; id: string; idSpan: IdSpan; value: Map<string, JsonValue> }
  | { kind: 'batch'; value: JsonValue[] }
  | { kind: 'invalid'; reason: string; /** The id, when the message has an unambiguous one to answer. */ id?: string };

/** The JSON text of an id value, or undefined if it is not a valid JSON-RPC id. */
export function idText(v: JsonValue | undefined): string | undefined {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (v instanceof JsonNumber) return v.lexeme;
  return undefined;
}

/** The members of a JSON-RPC message. */
const ENVELOPE = foldedNames(['jsonrpc', 'id', 'method', 'params', 'result', 'error']);

/** From this many bytes on, classify leaves the long strings inside a message's members (a tool's result
 *  text) out of its value until the value is first used: a relay that forwards the answer as it came never makes
 *  them into strings (docs/adr/0026-bulk-relay.md). */
export const DEFER_FROM = 64 * 1024;

/** The reasons of invalid lines that quote nothing of the line's. */
export const AMBIGUOUS_CR = 'ambiguous: a carriage return inside the line, which a reader of universal newlines takes for a line end';
export const AMBIGUOUS_BOTH = 'ambiguous: a message with both a method and a result or error';
export const AMBIGUOUS_JSONRPC = 'ambiguous: its "jsonrpc" member is not "2.0", so a JSON-RPC 2.0 reader takes it for no message';

/** Classifies one line (newline included or not). Never throws. A message with a member that a reader
 *  ignoring case takes for one of the envelope's (`"Method"` beside `"method"`) is invalid (protocol/fold.ts). */
export function classify(line: Uint8Array, limits: ReadLimits): Classified {
  const capture: ReadCapture = { defer: line.byteLength >= DEFER_FROM };
  const msg = classifyRead(line, limits, capture);
  if (capture.deferred && 'value' in msg) {
    // Every check was made on the bytes; what is left is making the strings, on the first use of the value.
    const value = msg.value;
    const bytes = Buffer.from(line.buffer, line.byteOffset, line.byteLength);
    Object.defineProperty(msg, 'value', {
      enumerable: true,
      get() {
        fillDeferred(capture, bytes);
        return value;
      },
    });
  }
  return msg;
}

function classifyRead(line: Uint8Array, limits: ReadLimits, capture: ReadCapture): Classified {
  let value: JsonValue;
  try {
    value = readJson(line, limits, capture);
  } catch (err) {
    if (err instanceof JsonReadError) return { kind: 'invalid', reason: `${err.kind}: ${err.message}` };
    throw err;
  }
  if (capture.carriageReturn !== undefined && !lineEndsAt(line, capture.carriageReturn)) {
    // A bare carriage return is JSON whitespace to the warden and a line end to a reader of universal newlines
    // (python's text stdin, node's readline): such a peer would read other messages out of this one.
    const id = value instanceof Map ? idText(value.get('id')) : undefined;
    return { kind: 'invalid', reason: AMBIGUOUS_CR, ...(id !== undefined ? { id } : {}) };
  }
  if (Array.isArray(value)) return { kind: 'batch', value };
  if (!(value instanceof Map)) return { kind: 'invalid', reason: 'not a JSON object' };
  const variant = caseVariant(value.keys(), ENVELOPE);
  if (variant) {
    const id = variant.name === 'id' ? undefined : idText(value.get('id'));
    return { kind: 'invalid', reason: `ambiguous: member "${printable(variant.key)}" is "${variant.name}" to a reader that ignores case`, ...(id !== undefined ? { id } : {}) };
  }
  const method = value.get('method');
  const hasId = value.has('id');
  const id = idText(value.get('id'));
  if (hasId && id === undefined) return { kind: 'invalid', reason: 'id is not a string, number or null' };
  if (value.has('method') && (value.has('result') || value.has('error'))) {
    // A request (or notification) and a response at once: one reader dispatches on the method, another on the
    // result. Such a message cannot be read one way only.
    return { kind: 'invalid', reason: AMBIGUOUS_BOTH };
  }
  const message = typeof method === 'string' || (hasId && id !== undefined && (value.has('result') || value.has('error')));
  if (message && value.get('jsonrpc') !== '2.0') {
    // A message (by its method, or its id and result) that a JSON-RPC 2.0 reader (the SDKs' schemas:
    // z.literal("2.0")) takes for none: not read one way by the warden and another by the peer, and nothing else
    // rides along in the member. A JSON line that is no message at all stays what it was (log noise).
    return { kind: 'invalid', reason: AMBIGUOUS_JSONRPC, ...(id !== undefined ? { id } : {}) };
  }
  if (typeof method === 'string') {
    return hasId && id !== undefined && capture.idSpan ? { kind: 'request', method, id, idSpan: capture.idSpan, value } : { kind: 'notification', method, value };
  }
  if (value.has('method')) return { kind: 'invalid', reason: 'method is not a string' };
  if (hasId && id !== undefined && capture.idSpan && (value.has('result') || value.has('error'))) return { kind: 'response', id, idSpan: capture.idSpan, value };
  return { kind: 'invalid', reason: 'neither a request, a notification nor a response' };
}

/** True when the carriage return at `at` ends the line: its last byte, or the one before the final newline. */
function lineEndsAt(line: Uint8Array, at: number): boolean {
  const n = line.byteLength;
  return at === n - 1 || (at === n - 2 && line[n - 1] === 0x0a);
}

/** A JSON-RPC error response for an id given as JSON text. */
export function errorResponse(id: string, code: number, message: string, data?: unknown): Buffer {
  const error = data === undefined ? { code, message } : { code, message, data };
  return Buffer.from(`{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify(error)}}\n`);
}

/** From this many bytes on, withId leaves the line in pieces instead of copying it (a 1 MiB tools/call result:
 *  ~0.1–0.2 ms a copy, and the garbage of it). Below, one small copy is cheaper than a corked write of three. */
export const SPLICE_FROM = 64 * 1024;

/** The line with its id's bytes replaced by `id` (the JSON text of another id); every other byte is kept. A
 *  long line comes back in three pieces that share its memory (protocol/line.ts). */
export function withId(line: Buffer, span: IdSpan, id: Buffer): Line {
  const [start, end] = span;
  if (id.equals(line.subarray(start, end))) return line;
  const pieces = [line.subarray(0, start), id, line.subarray(end)];
  return line.length >= SPLICE_FROM ? pieces : Buffer.concat(pieces);
}
