import { JsonNumber, readJson, type JsonObject, type JsonValue } from '../protocol/json/reader.js';
import { serialize } from '../protocol/json/write.js';
import type { Line } from '../protocol/line.js';

// What of a server's response the client may receive beyond what the lock judges (admission by proof, issue 26's
// second review). Nothing about these members is locked, so none is relayed:
// - the response envelope carries only jsonrpc, id and result or error (a server's `_meta` or `instructions`
//   beside `result` is dropped);
// - a listing page's result carries only its items and `nextCursor` (its `_meta` and members no revision defines
//   are dropped; the items themselves are judged by client-listing.ts and client-catalog.ts);
// - a response with both a result and an error relays the error only;
// - the methods whose result the revision defines as empty (ping, logging/setLevel, resources/subscribe and
//   unsubscribe) relay an empty result, whatever the server put there;
// - completion/complete relays its `completion` member only (its values are the server's output, not locked).
// A response the warden changes is re-serialized (member order and number lexemes kept, the client's id set).

const ENVELOPE = new Set(['jsonrpc', 'id', 'result', 'error']);
const EMPTY_RESULT = new Set(['ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);
/** Results whose members the revision defines and whose values are the server's output, not its surface: only
 *  those members pass. */
const RESULT_MEMBERS: Record<string, readonly string[]> = { 'completion/complete': ['completion'] };

/** The members of a response a relay drops: outside the envelope, and (for `pageKeys`) outside a page's own. */
export interface Dropped {
  envelope: string[];
  result: string[];
}

/** What a 2026-07-28 result carries beside its own members: negotiation and caching, not surface (formats.md). */
const MODERN_RESULT = ['resultType', 'ttlMs', 'cacheScope', '_meta'];
/** Of a 2026-07-28 result's `_meta`, what is relayed: the server's name, which every result carries. */
const MODERN_META = 'io.modelcontextprotocol/serverInfo';

/** In a 2026-07-28 session a page keeps the revision's own result members too, its `_meta` only the server's
 *  name (responses to `modern` requests). */
export function modernPageKeys(keys: readonly string[]): string[] {
  return [...keys, ...MODERN_RESULT];
}

/** Whether a 2026-07-28 negotiation or caching member has the revision's shape (else it could carry text). */
function modernShape(k: string, v: JsonValue): boolean {
  if (k === 'resultType') return v === 'complete';
  if (k === 'ttlMs') return v instanceof JsonNumber && /^\d{1,12}$/.test(v.lexeme);
  if (k === 'cacheScope') return v === 'private' || v === 'shared';
  return true;
}

function modernMembers(result: JsonObject, dropped: Dropped): JsonObject {
  const bad = [...result].filter(([k, v]) => !modernShape(k, v)).map(([k]) => k);
  const meta = result.get('_meta');
  const metaExtra = meta instanceof Map ? [...meta.keys()].filter((k) => k !== MODERN_META) : [];
  if (bad.length === 0 && metaExtra.length === 0) return result;
  dropped.result.push(...bad, ...metaExtra.map((k) => `_meta.${k}`));
  const kept = new Map([...result].filter(([k]) => !bad.includes(k)));
  if (meta instanceof Map && metaExtra.length > 0) kept.set('_meta', new Map([...meta].filter(([m]) => m === MODERN_META)));
  return kept;
}

/** The response without the members nothing judged; `value` itself when nothing is dropped. */
export function shapedResponse(value: JsonObject, method: string, pageKeys: readonly string[] | undefined): { value: JsonObject; dropped: Dropped } {
  const dropped: Dropped = { envelope: [...value.keys()].filter((k) => !ENVELOPE.has(k)), result: [] };
  // A response is a result or an error: beside an error, a result is not relayed (the error is the answer).
  if (value.has('error') && value.has('result')) dropped.envelope.push('result');
  const result = value.get('result');
  let shapedResult: JsonValue | undefined = result;
  const kept = pageKeys ?? RESULT_MEMBERS[method];
  if (EMPTY_RESULT.has(method) && result !== undefined && !(result instanceof Map && result.size === 0)) {
    dropped.result = result instanceof Map ? [...result.keys()] : ['(a result that is not an object)'];
    shapedResult = new Map();
  } else if (kept && result instanceof Map) {
    dropped.result = [...result.keys()].filter((k) => !kept.includes(k));
    if (dropped.result.length > 0) shapedResult = new Map([...result].filter(([k]) => kept.includes(k)));
    if (kept.includes('_meta')) shapedResult = modernMembers(shapedResult as JsonObject, dropped);
  }
  if (dropped.envelope.length === 0 && dropped.result.length === 0) return { value, dropped };
  const out: JsonObject = new Map([...value].filter(([k]) => ENVELOPE.has(k) && !dropped.envelope.includes(k)));
  if (shapedResult !== undefined && out.has('result')) out.set('result', shapedResult);
  return { value: out, dropped };
}

/** The bytes to relay for a shaped response: the original when nothing was dropped, else the shaped value with
 *  the client's id (a raw lexeme). */
export function shapedBytes(shaped: { value: JsonObject; dropped: Dropped }, clientId: string, bytes: Line): Line {
  if (shaped.dropped.envelope.length === 0 && shaped.dropped.result.length === 0) return bytes;
  const v = new Map(shaped.value);
  v.set('id', readJson(clientId));
  return Buffer.from(serialize(v) + '\n');
}
