import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { canonicalBytes } from '../protocol/json/canonical.js';
import type { JsonObject, JsonValue } from '../protocol/json/reader.js';
import { errorResponse } from '../protocol/message.js';
import { foldedNames, variantOf } from '../protocol/fold.js';
import { namesWarden } from './ask.js';
import { INVALID_PARAMS } from './era.js';
import { shownName, WARDEN_REFUSED, type Refuser } from './client-refusals.js';

// The rules' `ask` for a client of revision 2026-07-28 (docs/adr/0047-ask-as-input-required.md). Such a client
// takes no requests from the server side; it answers an `input_required` result through its elicitation handler
// and retries the request with `inputResponses` and the `requestState` it was given. So the warden answers a
// held call with its own `input_required`: one elicitation keyed `mcp-warden-ask-<nonce>`, and a requestState
// `mcp-warden-ask-<nonce>.<mac>`, the mac an HMAC-SHA256 under a random key of the session over the nonce and
// the call (its method and every member of its params but `_meta`, `inputResponses` and `requestState`, in
// RFC 8785 form). A retry that carries it is taken apart here: admitted once (the nonce is spent on its first
// use, whatever the outcome), only for that exact call, only with the answer to the warden's question alone,
// and stripped of both before the session judges the call again. Nothing that names mcp-warden in a retry
// reaches the server, and nothing of a server's retry is taken for the warden's.

const PREFIX = 'mcp-warden-ask-';
const STATE = /^mcp-warden-ask-([0-9a-f]{32})\.([A-Za-z0-9_-]{43})$/;
/** Questions open at once (oldest forgotten past it: its retry is refused as never asked). */
const MAX_OPEN = 16;
/** Server questions after a user's yes whose retry may go on without a second question. */
const MAX_CONTINUATIONS = 16;
/** Calls forwarded by the user's yes whose answer is awaited (a question of the server's may follow). */
const MAX_ASKED_CALLS = 64;
/** What a retry may carry (a server's state is passed through, so it is bounded, not read). */
export const MAX_REQUEST_STATE = 64 * 1024;
export const MAX_INPUT_RESPONSES = 32;
export const MAX_INPUT_KEY = 256;
const RETRY_MEMBERS = new Set(['_meta', 'inputResponses', 'requestState']);
/** The retry members the warden reads (protocol/fold.ts): another spelling is another reading. */
const RETRY_FOLDED = foldedNames(['requestState', 'inputResponses']);

export type WardenAnswer = 'accept' | 'decline' | 'cancel' | 'timeout';

/** What a client request's retry members make of it. */
export type Retry =
  | { kind: 'none' }
  /** A retry of the server's own question; `continues`: it answers one the server asked after the user's yes. */
  | { kind: 'server'; continues: boolean }
  /** The answer to the warden's question, and the call's params without the retry members. */
  | { kind: 'warden'; answer: WardenAnswer; params: JsonObject }
  | { kind: 'refused'; invalid: boolean; detail: string };

export class WardenInputRequired {
  private readonly key = randomBytes(32);
  /** Open questions: nonce to the time their answer is no longer taken. */
  private readonly open = new Map<string, number>();
  /** Macs of (call, server state) a retry may present once without a second question. */
  private readonly continuations = new Set<string>();
  /** Calls forwarded by the user's yes, by the server's id: their method and params as the client sent them. */
  private readonly asked = new Map<string, { method: string; params: JsonObject }>();

  /** The answer to request `id` (JSON text): an `input_required` result asking `message` about this call; the
   *  answer must come within `timeoutMs`. */
  question(id: string, method: string, params: JsonObject, message: string, timeoutMs: number): Buffer {
    const nonce = randomBytes(16).toString('hex');
    this.open.set(nonce, Date.now() + timeoutMs);
    if (this.open.size > MAX_OPEN) this.open.delete(this.open.keys().next().value as string);
    const state = `${PREFIX}${nonce}.${this.mac('state', nonce, this.callDigest(method, params))}`;
    const request = { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema: { type: 'object', properties: {} } } };
    const result = { resultType: 'input_required', inputRequests: { [PREFIX + nonce]: request }, requestState: state };
    return Buffer.from(`{"jsonrpc":"2.0","id":${id},"result":${JSON.stringify(result)}}\n`);
  }

  /** A call went to the server by the user's yes (`serverId`: the id it was given). */
  forwarded(serverId: string, method: string, params: JsonObject): void {
    this.asked.set(serverId, { method, params });
    if (this.asked.size > MAX_ASKED_CALLS) this.asked.delete(this.asked.keys().next().value as string);
  }

  /** The server answered request `serverId`: the call, when it went by the user's yes. */
  answered(serverId: string): { method: string; params: JsonObject } | undefined {
    const call = this.asked.get(serverId);
    this.asked.delete(serverId);
    return call;
  }

  /** The server answered a call the user said yes to with a question of its own (`state` its requestState):
   *  the client's retry of that call with that state goes on without the warden asking again, once. */
  continueAfter(call: { method: string; params: JsonObject }, state: JsonValue | undefined): void {
    this.continuations.add(this.mac('continue', typeof state === 'string' ? state : '', this.callDigest(call.method, call.params)));
    if (this.continuations.size > MAX_CONTINUATIONS) this.continuations.delete(this.continuations.values().next().value as string);
  }

  /** Reads a client request's `inputResponses` and `requestState`. */
  read(method: string, params: JsonObject): Retry {
    for (const k of params.keys()) {
      const exact = variantOf(k, RETRY_FOLDED);
      if (exact !== undefined) return refused(true, `its params carry "${shownName(k)}", which a server reading names without regard to case takes for "${exact}"; send each member under its exact name once`);
    }
    const state = params.get('requestState');
    const responses = params.get('inputResponses');
    if (state === undefined && responses === undefined) return { kind: 'none' };
    if (state !== undefined && typeof state !== 'string') return refused(true, 'its requestState is not a string');
    if (responses !== undefined && !(responses instanceof Map)) return refused(true, 'its inputResponses is not an object');
    if (state !== undefined && state.length > MAX_REQUEST_STATE) return refused(true, `its requestState is over ${MAX_REQUEST_STATE} characters`);
    if (responses && responses.size > MAX_INPUT_RESPONSES) return refused(true, `it carries over ${MAX_INPUT_RESPONSES} inputResponses`);
    if (responses && [...responses.keys()].some((k) => k.length > MAX_INPUT_KEY)) return refused(true, `an inputResponses key is over ${MAX_INPUT_KEY} characters`);
    const m = state === undefined ? null : STATE.exec(state);
    if (m) return this.wardenRetry(method, params, m[1] as string, m[2] as string, responses);
    const named = namesWarden;
    if ((state !== undefined && named(state)) || (responses && [...responses.keys()].some(named))) {
      return refused(false, "it carries a requestState or an answer named as mcp-warden's that is not the warden's requestState for this call with the answer to its question alone");
    }
    const digest = this.callDigest(method, params);
    return { kind: 'server', continues: this.continuations.delete(this.mac('continue', state ?? '', digest)) };
  }

  private wardenRetry(method: string, params: JsonObject, nonce: string, mac: string, responses: JsonObject | undefined): Retry {
    const expires = this.open.get(nonce);
    this.open.delete(nonce); // spent on its first use, whatever comes of it
    if (expires === undefined) return refused(false, "its requestState is not one of a question of the warden's still open on this session (never asked, answered already, or forgotten)");
    const expected = Buffer.from(this.mac('state', nonce, this.callDigest(method, params)));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return refused(false, "its requestState was altered, or was given for another call (another tool, other arguments)");
    const key = PREFIX + nonce;
    if (!responses || responses.size !== 1 || !responses.has(key)) return refused(false, "with the warden's requestState it must carry the answer to the warden's question and nothing else");
    const response = responses.get(key);
    const action = response instanceof Map ? response.get('action') : undefined;
    if (action !== 'accept' && action !== 'decline' && action !== 'cancel') return refused(true, "the answer to the warden's question has no action accept, decline or cancel");
    const stripped = new Map([...params].filter(([k]) => k !== 'inputResponses' && k !== 'requestState'));
    return { kind: 'warden', answer: Date.now() > expires ? 'timeout' : action, params: stripped };
  }

  /** What makes the call that call: its method and its params but the request's metadata and retry members. */
  private callDigest(method: string, params: JsonObject): string {
    const call = new Map([...params].filter(([k]) => !RETRY_MEMBERS.has(k)));
    const h = createHmac('sha256', this.key).update('mcp-warden ask call v1\0').update(method).update('\0');
    return h.update(canonicalBytes(call, { mode: 'exact', inexact: false })).digest('base64url');
  }

  private mac(purpose: string, text: string, digest: string): string {
    return createHmac('sha256', this.key).update(`mcp-warden ask ${purpose} v1\0`).update(text).update('\0').update(digest).digest('base64url');
  }
}

function refused(invalid: boolean, detail: string): Retry {
  return { kind: 'refused', invalid, detail };
}

/** Whether client capabilities (an initialize's, or a modern request's envelope) declare form elicitation: an
 *  empty elicitation object means form mode (revision 2025-06-18); a later client names its modes. */
export function declaresFormElicitation(capabilities: JsonValue | undefined): boolean {
  const elicitation = capabilities instanceof Map ? capabilities.get('elicitation') : undefined;
  return elicitation instanceof Map && (elicitation.size === 0 || elicitation.get('form') instanceof Map);
}

/** A retry the warden does not relay: answered, counted, audited (`ask_state_refused`), reported. */
export function refuseRetry(r: Refuser, id: string, method: string, retry: Extract<Retry, { kind: 'refused' }>): void {
  const { serverId } = r.cfg;
  r.stats.refusedClientLines++;
  r.cfg.audit({ event: 'client_message_refused', server: serverId, reason: 'ask_state_refused', requests: 1, method: method.slice(0, 128) });
  r.cfg.report(`refused a ${shownName(method)} request of the client for server '${serverId}': ${retry.detail}; not forwarded`);
  const next = 'Send the call again without inputResponses and requestState to be asked again.';
  r.toClient(errorResponse(id, retry.invalid ? INVALID_PARAMS : WARDEN_REFUSED, `mcp-warden refused ${shownName(method)} for server '${serverId}': ${retry.detail}. ${next}`, { reason: 'ask_state_refused', server: serverId }));
}

/** Why a server's `input_required` result is not relayed (its retry would be refused), or undefined: its size,
 *  or a requestState or inputRequests of another type than the revision's (no bound reads those: issue 26,
 *  eleventh review). */
export function serverQuestionRefusal(result: JsonObject): { reason: 'oversize_input' | 'malformed_result'; why: string } | undefined {
  const state = result.get('requestState');
  const requests = result.get('inputRequests');
  if (state !== undefined && typeof state !== 'string') return { reason: 'malformed_result', why: 'its requestState is not a string' };
  if (requests !== undefined && !(requests instanceof Map)) return { reason: 'malformed_result', why: 'its inputRequests is not an object' };
  if (state !== undefined && state.length > MAX_REQUEST_STATE) return { reason: 'oversize_input', why: `its requestState is over ${MAX_REQUEST_STATE} characters` };
  if (requests && requests.size > MAX_INPUT_RESPONSES) return { reason: 'oversize_input', why: `it asks over ${MAX_INPUT_RESPONSES} questions` };
  if (requests && [...requests.keys()].some((k) => k.length > MAX_INPUT_KEY)) return { reason: 'oversize_input', why: `an inputRequests key is over ${MAX_INPUT_KEY} characters` };
  return undefined;
}
