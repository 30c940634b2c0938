import { JsonNumber, readJson, type JsonObject, type JsonValue } from '../protocol/json/reader.js';
import { serialize } from '../protocol/json/write.js';
import type { Line } from '../protocol/line.js';
import { idText } from '../protocol/message.js';
import { shapedCompletion } from './completion.js';
import { SUBSCRIPTION_KEY } from './era.js';

// What of a server's response the client may receive beyond what the lock judges (admission by proof, issue 26's
// second review). Nothing about these members is locked, so none is relayed:
// - the response envelope carries only jsonrpc, id and result or error (a server's `_meta` or `instructions`
//   beside `result` is dropped);
// - a listing page's result carries only its items and `nextCursor` (its `_meta` and members no revision defines
//   are dropped; the items themselves are judged by client-listing.ts and client-catalog.ts);
// - a response with both a result and an error relays the error only;
// - the methods whose result the revision defines as empty (ping, logging/setLevel, resources/subscribe and
//   unsubscribe) relay an empty result, whatever the server put there;
// - completion/complete relays its `completion` member only, and of it `values` (at most 100 strings of at most
//   1,024 characters), `total` and `hasMore` in the revision's types (completion.ts; its values are the server's
//   output about an item the session admits, not locked);
// - subscriptions/listen (revision 2026-07-28: the answer that ends a subscription) relays `resultType` and, of
//   its `_meta`, the server's name and the subscription's stamp (the client's own id); its acknowledgement and
//   list changes are the warden's lines, built by subscriptionNotification.
// A response the warden changes is re-serialized (member order and number lexemes kept, the client's id set).
// Those rules read objects: an answer they cannot read is not relayed at all (issue 26, eleventh review). A
// completion/complete or subscriptions/listen result that is not an object (a completion whose `values` are not
// the revision's: `completion`), and on a 2026-07-28 connection a result
// whose `_meta` is not an object (it names no server to judge), are answered with the warden's refusal
// (malformedAnswer); a `_meta` that is not an object is also dropped here, should anything else relay the result.

const ENVELOPE = new Set(['jsonrpc', 'id', 'result', 'error']);
const EMPTY_RESULT = new Set(['ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);
/** Results whose members the revision defines and whose values are the server's output, not its surface: only
 *  those members pass. */
const RESULT_MEMBERS = new Map<string, readonly string[]>([
  ['completion/complete', ['completion']],
  ['subscriptions/listen', ['resultType', '_meta']],
]);

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
  if (k === 'cacheScope') return v === 'public' || v === 'private'; // schema/2026-07-28 CacheableResult
  if (k === '_meta') return v instanceof Map; // else it names no server, and carries whatever text it is
  return true;
}

function modernMembers(result: JsonObject, dropped: Dropped, metaKeys: readonly string[]): JsonObject {
  const bad = [...result].filter(([k, v]) => !modernShape(k, v)).map(([k]) => k);
  const meta = result.get('_meta');
  const metaExtra = meta instanceof Map ? [...meta.keys()].filter((k) => !metaKeys.includes(k)) : [];
  if (bad.length === 0 && metaExtra.length === 0) return result;
  dropped.result.push(...bad, ...metaExtra.map((k) => `_meta.${k}`));
  const kept = new Map([...result].filter(([k]) => !bad.includes(k)));
  if (meta instanceof Map && metaExtra.length > 0) kept.set('_meta', new Map([...meta].filter(([m]) => metaKeys.includes(m))));
  return kept;
}

/** The response without the members nothing judged; `value` itself when nothing is dropped. */
export function shapedResponse(value: JsonObject, method: string, pageKeys: readonly string[] | undefined): { value: JsonObject; dropped: Dropped } {
  const dropped: Dropped = { envelope: [...value.keys()].filter((k) => !ENVELOPE.has(k)), result: [] };
  // A response is a result or an error: beside an error, a result is not relayed (the error is the answer).
  if (value.has('error') && value.has('result')) dropped.envelope.push('result');
  const result = value.get('result');
  let shapedResult: JsonValue | undefined = result;
  const kept = pageKeys ?? RESULT_MEMBERS.get(method);
  if (EMPTY_RESULT.has(method) && result !== undefined && !(result instanceof Map && result.size === 0)) {
    dropped.result = result instanceof Map ? [...result.keys()] : ['(a result that is not an object)'];
    shapedResult = new Map();
  } else if (kept && result instanceof Map) {
    dropped.result = [...result.keys()].filter((k) => !kept.includes(k));
    if (dropped.result.length > 0) shapedResult = new Map([...result].filter(([k]) => kept.includes(k)));
    if (kept.includes('_meta')) shapedResult = modernMembers(shapedResult as JsonObject, dropped, method === 'subscriptions/listen' ? [MODERN_META, SUBSCRIPTION_KEY] : [MODERN_META]);
    const completion = method === 'completion/complete' ? shapedCompletion(result.get('completion')) : undefined;
    if (completion && completion.dropped.length > 0) {
      dropped.result.push(...completion.dropped);
      shapedResult = new Map([...(shapedResult as JsonObject)].map(([k, v]) => [k, k === 'completion' ? completion.value : v]));
    }
  }
  if (dropped.envelope.length === 0 && dropped.result.length === 0) return { value, dropped };
  const out: JsonObject = new Map([...value].filter(([k]) => ENVELOPE.has(k) && !dropped.envelope.includes(k)));
  if (shapedResult !== undefined && out.has('result')) out.set('result', shapedResult);
  return { value: out, dropped };
}

/** What of an answer the shaping rules cannot read, so that nothing of it is relayed: a result that is not an
 *  object where the warden keeps some of its members only (`result`), a completion not of the revision's shape
 *  (`completion`), or on a 2026-07-28 connection (`modern`) a
 *  result's `_meta` that is not an object (`_meta`); undefined for an answer they read (an error answer too). */
export function malformedAnswer(value: JsonObject, method: string, modern: boolean): 'result' | '_meta' | 'completion' | undefined {
  const result = value.get('result');
  if (result === undefined || value.has('error')) return undefined;
  if (!(result instanceof Map)) return RESULT_MEMBERS.has(method) ? 'result' : undefined;
  if (method === 'completion/complete' && !shapedCompletion(result.get('completion'))) return 'completion';
  return modern && result.has('_meta') && !(result.get('_meta') instanceof Map) ? '_meta' : undefined;
}

/** The bytes to relay for a shaped response: the original when nothing was dropped, else the shaped value with
 *  the client's id (a raw lexeme). */
export function shapedBytes(shaped: { value: JsonObject; dropped: Dropped }, clientId: string, bytes: Line): Line {
  if (shaped.dropped.envelope.length === 0 && shaped.dropped.result.length === 0) return bytes;
  const v = new Map(shaped.value);
  v.set('id', readJson(clientId));
  return Buffer.from(serialize(v) + '\n');
}

/** The answer that ends a subscription (a subscriptions/listen result), as relayed: shaped as above, its `_meta`
 *  stamp rewritten to the client's own id when it is the id the server was given (`serverId`), else dropped; the
 *  bytes are always the warden's serialization. */
export function listenAnswer(value: JsonObject, serverId: string, clientId: string): { bytes: Buffer; dropped: Dropped } {
  const shaped = shapedResponse(value, 'subscriptions/listen', undefined);
  const out = new Map(shaped.value);
  out.set('id', readJson(clientId));
  const result = out.get('result');
  const meta = result instanceof Map ? result.get('_meta') : undefined;
  if (result instanceof Map && meta instanceof Map && meta.has(SUBSCRIPTION_KEY)) {
    const stamped = new Map(meta);
    if (idText(meta.get(SUBSCRIPTION_KEY)) === serverId) stamped.set(SUBSCRIPTION_KEY, readJson(clientId));
    else {
      stamped.delete(SUBSCRIPTION_KEY);
      shaped.dropped.result.push(`_meta.${SUBSCRIPTION_KEY}`);
    }
    out.set('result', new Map([...result, ['_meta', stamped]]));
  }
  return { bytes: Buffer.from(serialize(out) + '\n'), dropped: shaped.dropped };
}

/** The list-change flags of the revision's subscription filter (SubscriptionFilter). */
const FILTER_FLAGS = ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'];

/** A notification of a subscription as the warden relays it (revision 2026-07-28): the method, the stamp of the
 *  client's own listen id, and for an acknowledgement the part of the server's filter the client's proves (a
 *  flag `false`, or `true` where the client asked `true`; of `resourceSubscriptions`, the URIs the client sent).
 *  Nothing else of the server's line: its other params and `_meta` members are not relayed. */
export function subscriptionNotification(method: string, clientId: string, ack?: { server: JsonValue | undefined; asked: JsonValue | undefined }): Buffer {
  const params: JsonObject = new Map();
  if (ack) {
    const filter: JsonObject = new Map();
    const { server, asked } = ack;
    if (server instanceof Map && asked instanceof Map) {
      for (const [k, v] of server) {
        if (FILTER_FLAGS.includes(k) && (v === false || (v === true && asked.get(k) === true))) filter.set(k, v);
        const mine = asked.get(k);
        if (k === 'resourceSubscriptions' && Array.isArray(v) && Array.isArray(mine)) filter.set(k, v.filter((u) => typeof u === 'string' && mine.includes(u)));
      }
    }
    params.set('notifications', filter);
  }
  params.set('_meta', new Map([[SUBSCRIPTION_KEY, readJson(clientId)]]));
  return Buffer.from(serialize(new Map<string, JsonValue>([['jsonrpc', '2.0'], ['method', method], ['params', params]])) + '\n');
}
