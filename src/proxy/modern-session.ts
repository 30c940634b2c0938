import { printable } from '../escape.js';
import type { JsonObject, JsonValue } from '../protocol/json/reader.js';
import type { Line } from '../protocol/line.js';
import { errorResponse } from '../protocol/message.js';
import type { Handshake } from '../surface/admit.js';
import { InadmissibleError } from '../surface/admit.js';
import { SERVER_INFO_META, admitDiscover, unconfirmed } from '../surface/discover.js';
import { questionImpersonation } from './ask.js';
import { withParams, type ModernAsk } from './call-rules.js';
import { declaresFormElicitation, refuseRetry, serverQuestionRefusal, WardenInputRequired, type Retry } from './input-required.js';
import type { ClientRequest, ClientRequestMessage, ResponseMessage, ServerChannel, ServerMessage } from './channel.js';
import { admitRead, METHOD_NOT_FOUND, WARDEN_REFUSED, shownName, type Refuser } from './client-refusals.js';
import { modernRule } from './client-methods.js';
import { CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, INVALID_PARAMS, MODERN_REVISION, UNSUPPORTED_PROTOCOL_VERSION, envelopeClaim, envelopeText, nextEra, type Era } from './era.js';
import { discoverRefusal, judgeServerInfo, lockedHandshake } from './modern-judge.js';
import type { ServerReports } from './server-reports.js';
import { SurfaceRefusal, type SessionConfig } from './session-config.js';
import type { SurfaceGate } from './surface-gate.js';
import { answerRefused, malformedRefused, serverInfoRefused } from './refusal-text.js';
import { listenAnswer, malformedAnswer, shapedBytes, shapedResponse } from './response-shape.js';
import { foldRefusal } from './result-fold.js';

/** Why a server's input_required answer is refused for its wording (ask.ts questionImpersonation). */
const INPUT_REFUSED = {
  worded: 'it asks for input worded as a question of mcp-warden, which only the warden may ask',
  bidi: 'it asks for input holding a bidi control (U+202A-U+202E, U+2066-U+2069), which a client may show as text reversed',
  markup: 'it asks for input holding HTML (a tag, comment, declaration, CDATA or processing instruction: "<" then a letter, "/", "!" or "?"), which a client may hide or show as it likes; a question is plain text or Markdown',
  too_large: 'it asks for input holding more strings, longer or deeper, than the warden reads to tell whether it is worded as a question of mcp-warden',
} as const;
import { Subscriptions } from './subscriptions.js';

// A session of revision 2026-07-28 (docs/adr/0044-modern-era.md, 0059-modern-judge-first.md): no handshake,
// every request with the client's `_meta` envelope, judged request by request against the server's lock entry:
// - the era is decided from the client's first message (era.ts) and kept; a message of the other era, or a
//   modern one without a valid envelope, is answered by the warden with the revision's error, never relayed;
// - a client's server/discover is relayed and its result judged like an initialize result (instructions, the
//   handshake print) before it is released; an error answer (a 2025 server's "method not found") passes, so the
//   client falls back to initialize;
// - before any other request is relayed (a listing page, a call, a get, a read, a completion, a listen) the
//   warden lists everything itself under that request's envelope and judges it, and a judge that refuses the
//   server answers that request with the refusal (Session.fail); then the 2025 gates apply as they are, and the
//   server's name in each result's `_meta` is judged against the lock (modern-judge.ts judgeServerInfo);
// - the warden's own requests carry the envelope of the client request they act for (RequestStyle.envelope);
// - subscriptions/listen is relayed under the client's own id (the server stamps it on the subscription's
//   notifications); an acknowledgement or a list change reaches the client only for a subscription it opened,
//   a list change only after the acknowledgement and for a list it asked for, and after the warden re-listed;
//   each as the warden's own line (response-shape.ts subscriptionNotification), never the server's bytes
//   (subscriptions.ts);
// - a result that asks for input (`input_required`) worded as a question of mcp-warden is refused; a call the
//   rules hold for the user is answered with the warden's own, and its retry judged again (input-required.ts).

/** What the modern session needs of the session it is part of. */
export interface ModernHost {
  cfg: SessionConfig;
  refuser: Refuser;
  server: ServerChannel;
  surface: SurfaceGate;
  reports: ServerReports;
  toClient(bytes: Line): void;
  /** Relays a client request (`ownId`: under its own id when it can be kept). */
  forward(msg: ClientRequestMessage, bytes: Buffer, ownId?: boolean): Promise<ClientRequest | undefined>;
  admitCall(msg: ClientRequestMessage, bytes: Buffer, asked: boolean, modern: ModernAsk): Promise<{ msg: ClientRequestMessage; bytes: Buffer; asked?: boolean } | undefined>;
  /** The surface is judged: re-lists fall due by calls and time from now on. */
  judged(): void;
  failFrom(err: unknown): void;
  stopped(): boolean;
}

type ClientMessage = { kind: 'request' | 'notification'; method: string; id?: string; value: JsonObject };

export class ModernSession {
  era: Era = 'undecided';
  /** The judged server/discover result of this connection, when it came before the judge. */
  private discovered: Handshake | undefined;
  /** The connection's open subscriptions (subscriptions.ts). */
  private readonly subscriptions: Subscriptions;
  /** The warden's own questions (the rules' ask) and the retries that answer them. */
  private readonly asks = new WardenInputRequired();
  /** A changed serverInfo allowed in monitor was reported (once a session). */
  private serverInfoReported = false;

  constructor(private readonly host: ModernHost) {
    this.subscriptions = new Subscriptions(host);
  }

  /** True once the connection is of revision 2026-07-28 (or probing it with server/discover). */
  get active(): boolean {
    return this.era === 'probe' || this.era === 'modern';
  }

  /** Decides the era on a client request or notification, and checks a modern one's envelope. False when the
   *  warden refused it (a request is answered with the revision's error). */
  admit(msg: ClientMessage): boolean {
    const claim = envelopeClaim(msg.value.get('params'));
    const before = this.era;
    this.era = nextEra(this.era, claim, msg.method);
    if (before === 'probe' && this.era === 'classic') this.host.server.style.reset(); // the discover's form is not the 2025 one
    if (this.era === 'classic' ? claim.kind === 'none' : !this.active || claim.kind === 'modern') return true;
    const supported = [MODERN_REVISION];
    const [code, message, data] =
      this.era === 'classic'
        ? [WARDEN_REFUSED, `this connection is of revision 2025 (it began with initialize, or with a message without the ${MODERN_REVISION} envelope), and a message of revision ${MODERN_REVISION} is not relayed on it`, undefined]
        : claim.kind === 'invalid'
        ? [INVALID_PARAMS, `Invalid _meta envelope for protocol revision ${MODERN_REVISION}: ${claim.key}: ${claim.problem}`, { envelope: { key: claim.key, problem: claim.problem } }]
        : claim.kind === 'unsupported'
          ? [UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version: ${printable(claim.requested, 64)}`, { supported, requested: claim.requested.slice(0, 64) }]
          : [UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version: the request did not name a protocol version`, { supported }];
    const { cfg, stats } = this.host.refuser;
    stats.refusedClientLines++;
    cfg.audit({ event: 'client_message_refused', server: cfg.serverId, reason: 'other_era', requests: msg.kind === 'request' ? 1 : 0, method: msg.method.slice(0, 128) });
    const era = this.era === 'classic' ? 'start a new connection without initialize to use revision 2026-07-28' : `this connection speaks revision ${MODERN_REVISION}; send every request with its _meta envelope, or start a new connection with initialize`;
    cfg.report(`refused a ${shownName(msg.method)} ${msg.kind} of the client: ${message}; not forwarded`);
    if (msg.id !== undefined) this.host.toClient(errorResponse(msg.id, code, `mcp-warden: not forwarded: ${message} (${era}).`, data));
    return false;
  }

  /** A request of the client's on a modern connection, by the revision's method table. */
  async onRequest(msg: ClientRequestMessage, bytes: Buffer, asked: boolean): Promise<void> {
    const h = this.host;
    const rule = modernRule(msg.method);
    h.server.style.envelope = envelopeText(msg.value); // the warden's own requests now act for this one
    if (rule === undefined) {
      const { cfg, stats } = h.refuser;
      stats.refusedClientLines++;
      cfg.audit({ event: 'client_message_refused', server: cfg.serverId, reason: 'unknown_method', requests: 1, method: msg.method.slice(0, 128) });
      cfg.report(`answered a ${shownName(msg.method)} request of the client with "method not found": it is not a request of revision ${MODERN_REVISION}; not forwarded`);
      h.toClient(errorResponse(msg.id, METHOD_NOT_FOUND, 'Method not found'));
      return;
    }
    const retry = this.asks.read(msg.method, msg.value.get('params') as JsonObject);
    if (retry.kind === 'refused') refuseRetry(h.refuser, msg.id, msg.method, retry);
    else if (retry.kind === 'warden' && msg.method !== 'tools/call') refuseRetry(h.refuser, msg.id, msg.method, { kind: 'refused', invalid: false, detail: "the warden's requestState answers a tools/call only" });
    else if (rule === 'discover') await h.forward(msg, bytes);
    else if (await this.ensureJudge(msg)) {
      if (rule === 'listen') await this.subscriptions.listen(msg, bytes);
      else if (rule === 'pass') await h.forward(msg, bytes);
      else if (rule === 'gated_call') await this.call(msg, bytes, asked, retry);
      else if ((rule !== 'admitted_read' && rule !== 'admitted_completion') || admitRead(h.refuser, h.surface.judge?.reads, msg.id, msg.method, msg.value)) await h.forward(msg, bytes);
    }
  }

  /** A tools/call: the warden's answer stripped from its retry, then judged by the lock and the rules; a call
   *  they hold for the user is answered with the warden's own input_required. */
  private async call(msg: ClientRequestMessage, bytes: Buffer, asked: boolean, retry: Retry): Promise<void> {
    const h = this.host;
    const call = retry.kind === 'warden' ? withParams(msg, retry.params) : { msg, bytes };
    const params = call.msg.value.get('params') as JsonObject;
    const meta = params.get('_meta') as JsonObject;
    const out = await h.admitCall(call.msg, call.bytes, asked, {
      answer: retry.kind === 'warden' ? retry.answer : retry.kind === 'server' && retry.continues ? 'continued' : undefined,
      canAsk: declaresFormElicitation(meta.get(CLIENT_CAPABILITIES_KEY)),
      question: (message, timeoutMs) => h.toClient(this.asks.question(msg.id, msg.method, params, message, timeoutMs)),
    });
    const request = out && (await h.forward(out.msg, out.bytes));
    if (request && out?.asked) this.asks.forwarded(request.serverId, msg.method, params);
  }

  /** The judge of this connection, built before the first request that needs one: the warden lists everything
   *  itself under that request's envelope. False when the session closed. */
  private async ensureJudge(msg: ClientRequestMessage): Promise<boolean> {
    const h = this.host;
    if (h.surface.judge) return true;
    h.server.style.learn(msg.method, msg.value);
    const meta = (msg.value.get('params') as JsonObject).get('_meta') as JsonObject;
    h.cfg.clientSeen?.(meta.get(CLIENT_INFO_KEY));
    try {
      await h.surface.verify(this.discovered ?? lockedHandshake(h.cfg, MODERN_REVISION), h.stopped);
    } catch (err) {
      h.failFrom(err);
      return false;
    }
    if (h.stopped()) return false;
    h.judged();
    return true;
  }

  /** The client cancelled one of its requests (a subscription ends with it). */
  cancelled(clientId: string): void {
    this.subscriptions.cancelled(clientId);
  }

  /** The answer to a client request on a modern connection; false when the session's common path relays it. */
  async onAnswer(request: ClientRequest, msg: ResponseMessage, bytes: Line): Promise<boolean> {
    const h = this.host;
    if (request.method === 'subscriptions/listen') this.subscriptions.open.delete(request.serverId);
    const askedCall = this.asks.answered(request.serverId);
    const result = msg.value.get('result');
    if (request.method === 'server/discover' && result !== undefined && !msg.value.has('error')) {
      if (await h.surface.passedBeforeFirstByte()) this.judgeDiscover(request, result, shapedBytes(shapedResponse(msg.value, request.method, undefined), request.clientId, bytes));
      return true;
    }
    const malformed = malformedAnswer(msg.value, request.method, true);
    if (malformed) {
      h.reports.refused('malformed_result', `a ${printable(request.method, 64)} answer whose ${malformed === 'result' ? 'result is not a JSON object' : malformed === '_meta' ? "result's _meta is not a JSON object" : "completion is not the revision's shape"}`);
      h.toClient(malformedRefused(request.clientId, h.cfg.serverId, malformed));
      return true;
    }
    const folded = result instanceof Map && !msg.value.has('error') ? foldRefusal(result) : undefined;
    if (folded) {
      h.reports.refused('malformed_result', `a ${printable(request.method, 64)} answer: ${folded}`);
      h.toClient(errorResponse(request.clientId, WARDEN_REFUSED, `mcp-warden refused the answer of server '${h.cfg.serverId}' to ${shownName(request.method)}: ${folded}. Run 'mcp-warden audit' for details.`));
      return true;
    }
    if (result instanceof Map && !msg.value.has('error') && !this.serverInfoAdmitted(request, result)) return true;
    if (request.method === 'subscriptions/listen' && result !== undefined && !msg.value.has('error')) {
      const out = listenAnswer(msg.value, request.serverId, request.clientId);
      if (out.dropped.envelope.length + out.dropped.result.length > 0) h.reports.membersDropped(request.method, out.dropped);
      h.toClient(out.bytes);
      return true;
    }
    if (!(result instanceof Map) || result.get('resultType') !== 'input_required') return false;
    const impersonates = questionImpersonation(result.get('inputRequests'), result.get('requestState'));
    const refusal = impersonates ? { reason: 'impersonation' as const, why: INPUT_REFUSED[impersonates] } : serverQuestionRefusal(result);
    if (refusal === undefined) {
      if (askedCall) this.asks.continueAfter(askedCall, result.get('requestState'));
      return false;
    }
    const { serverId } = h.cfg;
    h.reports.refused(refusal.reason, `an input_required result to ${request.method}: ${refusal.why}`);
    h.toClient(errorResponse(request.clientId, WARDEN_REFUSED, `mcp-warden refused the answer of server '${serverId}' to ${request.method}: ${refusal.why}. Run 'mcp-warden audit' for details.`));
    return true;
  }

  /** Whether the server's name a result carries in its `_meta` may reach the client: the lock's, or a changed one
   *  in monitor (reported once); else the request is answered with the refusal and the session closed. */
  private serverInfoAdmitted(request: ClientRequest, result: JsonObject): boolean {
    const meta = result.get('_meta');
    // A `_meta` that is not an object names no server: judged as it is, it matches no print of the lock.
    const info = meta instanceof Map ? meta.get(SERVER_INFO_META) : meta;
    if (info === undefined) return true;
    const { cfg } = this.host;
    const judged = judgeServerInfo(cfg, info);
    if (judged.state === 'matched') return true;
    if (judged.state === 'allowed') {
      if (!this.serverInfoReported) cfg.report(`server '${cfg.serverId}': the serverInfo in the _meta of its answers is not the one warden.lock holds: allowed (monitor). Review with: mcp-warden diff ${cfg.serverId}`);
      this.serverInfoReported = true;
      return true;
    }
    this.host.toClient(serverInfoRefused(request.clientId, cfg.serverId, judged.refusal.said));
    this.host.failFrom(judged.refusal);
    return false;
  }

  /** A server/discover result: released only when its surface (read as an initialize result) is the lock's. */
  private judgeDiscover(request: ClientRequest, result: JsonValue, bytes: Line): void {
    const h = this.host;
    const { cfg } = h;
    try {
      const d = admitDiscover(result, MODERN_REVISION, cfg.caps);
      const refusal = discoverRefusal(cfg, d.handshake);
      if (refusal) throw refusal;
      const notConfirmed = unconfirmed(d, MODERN_REVISION);
      if (notConfirmed) cfg.report(`server '${cfg.serverId}': ${notConfirmed}; relayed (its surface matched the lock)`);
      if (!h.surface.judge) this.discovered = d.handshake;
    } catch (err) {
      // The client is told what happened in the warden's words; the detail goes to stderr and the audit (failFrom).
      const said = err instanceof SurfaceRefusal ? err.said : { code: 'inadmissible' as const, ...(err instanceof InadmissibleError && err.said ? { words: err.said } : {}) };
      h.toClient(answerRefused(request.clientId, cfg.serverId, 'the server/discover answer', err instanceof SurfaceRefusal ? 'surface_refused' : 'inadmissible', said));
      h.failFrom(err);
      return;
    }
    h.toClient(bytes);
  }

  /** A notification of the server's on a modern connection: subscription acknowledgements and list changes are
   *  decided here (true), the rest by the session's common path (false). */
  async onMessage(msg: ServerMessage, seq: number): Promise<boolean> {
    const h = this.host;
    if (msg.kind === 'request') {
      // A 2026-07-28 stdio server asks through input_required results, never with requests of its own, and a
      // probe has no judge yet: nothing is relayed, and nothing answered, as the SDK v2 client does on stdio
      // (during its probe it reads only the probe's answer; once modern, it writes no responses). ADR 0051.
      h.reports.refused('not_in_era', `a ${printable(msg.method, 64)} request on a ${this.era === 'probe' ? 'server/discover probe' : '2026-07-28 connection'}, where a server sends none`);
      return true;
    }
    if (msg.kind !== 'notification') return false;
    return this.subscriptions.onNotification(msg, seq);
  }
}
