import { printable } from '../escape.js';
import { JsonNumber, type JsonObject, type JsonValue } from '../protocol/json/reader.js';
import { serialize } from '../protocol/json/write.js';
import { caseVariant, foldedNames, type FoldedNames } from '../protocol/fold.js';
import { errorResponse, idText } from '../protocol/message.js';
import { MAX_TEMPLATES, type ReadAdmission, type ReadVerdict } from '../surface/read-admission.js';
import { READ_MATCH_STEPS } from '../surface/uri-template.js';
import { completionRef, REF_MEMBERS } from './completion.js';
import type { SessionConfig, SessionStats } from './session-config.js';

// What the session answers in the server's place when it does not forward a client message: a batch, a call
// to a tool that is not approved, a read of a prompt or resource that drifted. Each is counted, audited where
// the event is a contract, reported on stderr, and answered, so that no request of the client's waits forever.
// Names the client sent are shown escaped and cut (a name must not forge a second line of a report).

export const INVALID_REQUEST = -32600;
export const PARSE_ERROR = -32700;
export const WARDEN_REFUSED = -32001;
export const METHOD_NOT_FOUND = -32601;

export interface Refuser {
  cfg: Pick<SessionConfig, 'serverId' | 'audit' | 'report'>;
  stats: SessionStats;
  toClient(bytes: Buffer): void;
  /** Client-driven refusals recorded so far this session, by method and item (recordRefusal). */
  refusalsRecorded: Map<string, number>;
}

/** Refusals of one item by one method recorded (audited, and so alerted, and reported) one by one in a session: a
 *  client's picker sends a completion per keystroke (review 28), a model steered to retry sends the same call or
 *  read again and again (review 30). Past it one `reports_capped`, and the rest are refused and counted only.
 *  Items tracked apart: at most REFUSAL_ITEMS; past them the rest share one count. */
export const REFUSALS_RECORDED = 5;
const REFUSAL_ITEMS = 256;

/** A name from a message, escaped and cut for a report. */
export function shownName(name: string): string {
  return printable(name, 128);
}

/** A client batch (legal in revision 2025-03-26 only) is not relayed: every request in it is answered with
 *  the refusal, so none waits forever and none reaches the server unjudged. */
export function refuseBatch(r: Refuser, elements: JsonValue[]): void {
  const ids = elements.flatMap((e) => {
    const id = e instanceof Map && typeof e.get('method') === 'string' ? idText(e.get('id')) : undefined;
    return id === undefined ? [] : [id];
  });
  r.stats.refusedClientLines++;
  r.cfg.audit({ event: 'client_message_refused', server: r.cfg.serverId, reason: 'batch', requests: ids.length });
  r.cfg.report(`refused a JSON-RPC batch from the client (${elements.length} element(s)): batches are not relayed; send each message on its own line`);
  const message = 'mcp-warden: JSON-RPC batches are not relayed; send each message on its own line';
  if (ids.length === 0) r.toClient(errorResponse('null', INVALID_REQUEST, message));
  else r.toClient(Buffer.from(`[${ids.map((id) => errorResponse(id, INVALID_REQUEST, message).toString().trimEnd()).join(',')}]\n`));
}

/** The params members the warden reads to decide a request, by method (protocol/fold.ts). */
const DECIDING_PARAMS: Readonly<Record<string, FoldedNames>> = {
  'tools/call': foldedNames(['name', 'arguments']),
  'prompts/get': foldedNames(['name', 'arguments']),
  'resources/read': foldedNames(['uri']),
  'completion/complete': foldedNames(['ref']),
};

/**
 * Refuses a request whose params carry a member that a reader ignoring case takes for one the warden decides on
 * (`"NAME"` beside `"name"`: the warden would approve one tool and such a server run another). True when it was
 * refused (and answered).
 */
export function refuseAmbiguousParams(r: Refuser, id: string, method: string, params: JsonValue | undefined): boolean {
  const names = DECIDING_PARAMS[method];
  if (!names || !(params instanceof Map)) return false;
  const ref = method === 'completion/complete' ? params.get('ref') : undefined;
  const variant = caseVariant(params.keys(), names) ?? (ref instanceof Map ? caseVariant(ref.keys(), REF_MEMBERS) : undefined);
  if (!variant) return false;
  r.stats.refusedClientLines++;
  r.cfg.audit({ event: 'client_message_refused', server: r.cfg.serverId, reason: 'ambiguous_member', requests: 1, method, member: variant.name });
  r.cfg.report(`refused a ${method} whose params carry "${shownName(variant.key)}", which a server reading names without regard to case takes for "${variant.name}"; not forwarded`);
  r.toClient(errorResponse(id, INVALID_REQUEST, `mcp-warden: not forwarded: the params carry "${shownName(variant.key)}", which a server may read as "${variant.name}"; send each member under its exact name once`));
  return true;
}

/** Answers a tools/call of a tool that is not approved on this session. */
export function refuseCall(r: Refuser, id: string, toolName: string, judged: boolean): void {
  const { serverId } = r.cfg;
  const reason = judged ? 'not approved on this session (drifted, hidden until pinned, or never listed)' : 'no verified tool listing on this session yet';
  const tool = shownName(toolName);
  r.stats.refusedCalls++;
  if (recordRefusal(r, 'tools/call', 'tool', toolName)) {
    r.cfg.audit({ event: 'call_refused', server: serverId, tool: toolName.slice(0, 128), reason });
    r.cfg.report(`refused a call to tool "${tool}": ${reason}. Review with: mcp-warden diff ${serverId}`);
  }
  r.toClient(errorResponse(id, WARDEN_REFUSED, `mcp-warden refused the call to tool "${tool}" of server '${serverId}': ${reason}. Run 'mcp-warden diff ${serverId}' to see why.`));
}

/** Admits getting a prompt, reading a resource, or completing an argument of either (by its `ref`) only when the
 *  session's judged listing admitted the item; else answers the refusal. False when refused. */
export function admitRead(r: Refuser, reads: ReadAdmission | undefined, id: string, method: string, value: JsonObject): boolean {
  const params = value.get('params');
  if (method === 'completion/complete') {
    const ref = completionRef(params);
    const verdict = !ref ? 'no_ref' : (reads?.completion(ref.kind, ref.item) ?? 'no_handshake');
    if (verdict === 'admitted') return true;
    refuseRead(r, id, method, ref?.kind === 'prompts' ? 'prompt' : 'resource', ref?.item ?? '', verdict);
    return false;
  }
  const get = method === 'prompts/get';
  const raw = params instanceof Map ? params.get(get ? 'name' : 'uri') : undefined;
  const item = typeof raw === 'string' ? raw : '';
  const verdict = reads?.read(get ? 'prompts' : 'resources', item) ?? 'no_handshake';
  if (verdict === 'admitted') return true;
  refuseRead(r, id, get ? 'prompts/get' : 'resources/read', get ? 'prompt' : 'resource', item, verdict);
  return false;
}

const READ_REASONS: Record<Exclude<ReadVerdict, 'admitted'> | 'no_handshake' | 'no_ref', string> = {
  changed: 'changed or added since the lock (enforce)',
  unlisted: "not shown by the warden's listing of this session",
  unbounded: `not decidable within the warden's bound on reads through resource templates (the session's listings hold more than ${MAX_TEMPLATES} templates, or matching this URI against them takes more than ${READ_MATCH_STEPS.toLocaleString('en-US')} steps); read a URI the server lists as a resource, or ask its maintainer to list fewer templates`,
  not_canonical: 'its URI is not written as a URL parser writes it (dot segments, "%2e", the case of the scheme or a default port), so a server may read it as another resource than the one judged; send the URI as new URL(uri).href writes it',
  no_handshake: 'no verified handshake on this session',
  no_ref: 'its "ref" names no item the warden can judge (a "ref/prompt" with a string "name", or a "ref/resource" with a string "uri")',
};

/** Answers a prompts/get, resources/read or completion/complete of an item the session did not admit
 *  (surface/read-admission.ts). */
export function refuseRead(r: Refuser, id: string, method: 'prompts/get' | 'resources/read' | 'completion/complete', kind: 'prompt' | 'resource', item: string, why: keyof typeof READ_REASONS): void {
  const { serverId } = r.cfg;
  const shown = shownName(item);
  const reason = READ_REASONS[why];
  r.stats.refusedCalls++;
  if (recordRefusal(r, method, kind, item)) {
    r.cfg.audit({ event: 'read_refused', server: serverId, kind, id: item.slice(0, 128), reason });
    r.cfg.report(`refused ${method} of ${kind} "${shown}": ${reason}. Review with: mcp-warden diff ${serverId}`);
  }
  r.toClient(errorResponse(id, WARDEN_REFUSED, `mcp-warden refused ${method} of ${kind} "${shown}" of server '${serverId}': ${reason}. Run 'mcp-warden diff ${serverId}' to see why.`));
}

const CAPPED_REPORT = { 'tools/call': 'call_refused', 'prompts/get': 'read_refused', 'resources/read': 'read_refused', 'completion/complete': 'completion_refused' } as const;

/** Whether this refusal is recorded one by one (REFUSALS_RECORDED per method, item and session); the first past
 *  the cap writes the one `reports_capped`. */
export function recordRefusal(r: Refuser, method: keyof typeof CAPPED_REPORT, kind: string, item: string): boolean {
  const seen = r.refusalsRecorded;
  let key = `${method}\n${kind}\n${item.slice(0, 128)}`;
  if (!seen.has(key) && seen.size >= REFUSAL_ITEMS) key = '';
  const n = (seen.get(key) ?? 0) + 1;
  seen.set(key, n);
  if (n === REFUSALS_RECORDED + 1) {
    const { serverId } = r.cfg;
    r.cfg.audit({ event: 'reports_capped', server: serverId, report: CAPPED_REPORT[method], cap: REFUSALS_RECORDED });
    r.cfg.report(`refused ${method} of ${kind} "${shownName(item)}" ${n} times this session (a client's picker or a retrying model sends it again and again); each is refused, and past ${REFUSALS_RECORDED} they are not recorded one by one. Review with: mcp-warden diff ${serverId}`);
  }
  return n <= REFUSALS_RECORDED;
}

const REQUEST_REASONS: Record<'no_handshake' | 'during_handshake' | 'second_initialize' | 'unknown_method', string> = {
  no_handshake: 'this session has no verified handshake (send initialize first, or send every request with the _meta envelope of revision 2026-07-28)',
  during_handshake: 'the handshake is still being verified, and nothing is relayed before the initialize result; send it again after that result',
  second_initialize: "this session's handshake was already verified and released; start a new session to initialize again",
  unknown_method: 'it is not a request of MCP revision 2025-11-25 that the warden knows how to judge, so it is not relayed',
};

/** Answers a client request the session does not relay in its state (proxy/client-methods.ts). */
export function refuseRequest(r: Refuser, id: string, method: string, why: keyof typeof REQUEST_REASONS): void {
  const { serverId } = r.cfg;
  r.stats.refusedClientLines++;
  r.cfg.audit({ event: 'client_message_refused', server: serverId, reason: why, requests: 1, method: method.slice(0, 128) });
  r.cfg.report(`refused a ${shownName(method)} request of the client: ${REQUEST_REASONS[why]}; not forwarded`);
  r.toClient(errorResponse(id, WARDEN_REFUSED, `mcp-warden refused ${shownName(method)} for server '${serverId}': ${REQUEST_REASONS[why]}.`));
}

/** server/discover on a 2025 connection, or without a valid 2026-07-28 envelope, is answered by the warden:
 *  "method not found", as a legacy server would, so a client that negotiates falls back to initialize and gets a
 *  judged session. Never relayed (a modern connection's is: proxy/modern-session.ts). */
export function answerDiscover(r: Refuser, id: string): void {
  r.cfg.report(`answered the client's server/discover itself (it carries no valid revision 2026-07-28 envelope, or this connection is of revision 2025); the client may fall back to initialize`);
  r.toClient(errorResponse(id, METHOD_NOT_FOUND, 'Method not found: server/discover is relayed only with a valid revision 2026-07-28 _meta envelope, on a connection that did not begin in revision 2025; use initialize.'));
}

/** A listing answer on a 2025 session with no verified handshake (initialize refused): there is
 *  nothing to judge it against, so it is not passed on unjudged. */
export function refuseUnjudgedListing(r: Refuser, id: string, method: string): void {
  const { serverId } = r.cfg;
  r.cfg.report(`refused a ${method} answer of server '${serverId}': this session has no verified handshake to judge it against`);
  r.toClient(errorResponse(id, WARDEN_REFUSED, `mcp-warden refused this ${method} answer of server '${serverId}': the session has no verified handshake to judge it against (send initialize first, or every request with the _meta envelope of revision 2026-07-28).`));
}

/** The client's cancellation with the request's id as the server knows it; none when the request is not
 *  waiting at the server (the warden answered it itself, or the server already did). */
export function cancellationForServer(value: JsonObject, serverIdOf: (clientId: string) => string | undefined): Buffer | undefined {
  const params = value.get('params');
  const clientId = params instanceof Map ? idText(params.get('requestId')) : undefined;
  const serverId = clientId === undefined ? undefined : serverIdOf(clientId);
  if (serverId === undefined) return undefined;
  const rewritten = new Map(value);
  rewritten.set('params', new Map([...(params as JsonObject)].map(([k, v]) => [k, k === 'requestId' ? new JsonNumber(serverId) : v])));
  return Buffer.from(serialize(rewritten) + '\n');
}
