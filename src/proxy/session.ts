import type { Readable, Writable } from 'node:stream';
import { LineFramer } from '../protocol/framing.js';
import { escaped } from '../escape.js';
import { writeLine, type Line } from '../protocol/line.js';
import { classify, errorResponse } from '../protocol/message.js';
import { InadmissibleError } from '../surface/admit.js';
import { waitingItem, type ServerItem } from './waiting-message.js';
import { ProtocolError, ServerChannel, type ClientRequest, type ClientRequestMessage } from './channel.js';
import { CallRules, type ModernAsk } from './call-rules.js';
import { answerDiscover, INVALID_REQUEST, PARSE_ERROR, admitRead, refuseAmbiguousParams, refuseBatch, refuseCall, refuseRequest, type Refuser } from './client-refusals.js';
import { requestAction } from './client-methods.js';
import { ClientCatalogPages } from './client-catalog.js';
import { EarlyPings } from './early-pings.js';
import { words } from '../own-words.js';
import { WardenError } from '../error.js';
import { OwedFirstAnswer } from './refuse.js';
import { sessionClosed, type ClosingCause, type Said } from './refusal-text.js';
import { SurfaceRefusal, type SessionConfig, type SessionEnd, type SessionStats } from './session-config.js';
import { SurfaceGate } from './surface-gate.js';
import { OrderedQueue } from './ordered-queue.js';
import { ServerReports } from './server-reports.js';
import { ModernSession } from './modern-session.js';
import { relayClientNotification, type NotificationContext } from './client-notifications.js';
import { HandshakeHold } from './handshake-hold.js';
import { relayServerAnswer, relayServerMessage, type RelayHost } from './server-relay.js';

// The in-band session. The bytes the client and the server exchange are relayed as they are, except where
// the warden must act on this very session:
// - handshake gating: the server's initialize result is held while the warden sends `initialized` itself,
//   lists every page, and judges the surface against the lock; only then is the result released (with
//   whatever the server sent meanwhile, in order), or the client's initialize answered with the refusal
//   (handshake-hold.ts); once released, the server's answers and messages pass their gates (server-relay.ts);
// - a client tools/list response is judged in-band and loses the tools that are not approved (the only
//   message the warden re-serializes);
// - a client request is decided by its method and the session's state (client-methods.ts): an enumerated table,
//   nothing relayed before the handshake but ping and initialize; a prompts/get or resources/read only for an
//   item the session's judged listing admitted; catalog listings judged like tools/list;
// - tools/call for a tool not approved on this session is answered with an error and not forwarded;
// - notifications/tools/list_changed, and every N calls or T ms, trigger a re-list before anything else moves;
// - the server sees one id space for the client's requests and the warden's (the channel gives every request
//   the next number); an answer reaches the client only as the answer to one waiting request of its own;
// - batches are not relayed in either direction (a client's is answered with an error per request in it);
// - a connection of revision 2026-07-28 (no handshake; its era decided by its first message) is judged request
//   by request through the same gates (modern-session.ts).
// What is not forwarded is answered or reported, never dropped silently (docs/adr/0006, 0012).

export { SESSION_DEFAULTS, type SessionConfig, type SessionEnd } from './session-config.js';

/** Bytes the warden holds while it verifies (queued behind a listing, or sent before the initialize result). */
const MAX_WAITING_BYTES = 32 * 1024 * 1024;

type Item = { from: 'client'; bytes: Buffer; asked?: boolean } | ServerItem;

export class Session {
  readonly stats: SessionStats = { nonJsonLines: 0, oversizeLines: 0, refusedClientLines: 0, refusedServerMessages: 0, refusedCalls: 0, refusedPages: 0 };
  readonly ended: Promise<SessionEnd>;
  private resolveEnd!: (e: SessionEnd) => void;
  private readonly server: ServerChannel;
  private readonly pings = new EarlyPings();
  private readonly refuser: Refuser;
  private readonly reports: ServerReports;
  /** The operator's rules, when the server has any. */
  private readonly rules: CallRules | undefined;
  private readonly surface: SurfaceGate;
  private readonly catalogPages: ClientCatalogPages;
  /** Revision 2026-07-28: the era of the connection, and what a session without a handshake judges. */
  private readonly modern: ModernSession;
  private readonly notifications: NotificationContext;
  /** The handshake hold: the client's initialize, the server's result and what it sent meanwhile (handshake-hold.ts). */
  private readonly hold: HandshakeHold;
  /** What the server relay reads of this session (server-relay.ts). */
  private readonly relay: RelayHost;
  /** The client request being decided (not yet answered nor forwarded while the warden lists, judges or waits). */
  private deciding: string | undefined;
  private readonly queue: OrderedQueue<Item>;
  private seq = 0;
  /** True once the initialize result was judged and released to the client (a surface was reached). */
  get handshakeReleased(): boolean {
    return this.hold.released;
  }
  private stopped = false;
  private finished = false;
  /** Lines of the client's read before the session ended; none: its first request is owed the end's answer. */
  private clientLines = 0;
  private owed: OwedFirstAnswer | undefined;

  constructor(
    private readonly io: { clientIn: Readable; clientOut: Writable; serverIn: Writable; serverOut: Readable },
    private readonly cfg: SessionConfig,
  ) {
    this.ended = new Promise((r) => (this.resolveEnd = r));
    this.queue = new OrderedQueue<Item>(MAX_WAITING_BYTES, {
      handle: (item) => (item.from === 'client' ? this.onClientLine(item.bytes, item.asked) : this.onServerItem(item)),
      error: (err) => this.failFrom(err),
      clientEnd: () => {
        this.server.end();
        this.finish({ cause: 'client_eof' });
      },
      serverEnd: () => this.finish({ cause: 'server_eof' }),
      overflow: (bound) => this.fail('protocol_error', `the server sent more than ${bound} bytes that had to wait for the warden's verification (before the initialize result, or during a listing); the session was closed`, { code: 'protocol_error', words: words`it sent more than ${bound} bytes that had to wait for the warden's verification (before the initialize result, or during a listing)` }),
      waits: (item) => (item.from === 'server' ? waitingItem(item, cfg.channel.json) : item),
    }, () => this.hold.held.cost);
    this.refuser = { cfg, stats: this.stats, toClient: (bytes) => this.toClient(bytes), refusalsRecorded: new Map() };
    this.rules = cfg.rules && new CallRules(this.refuser, cfg.rules);
    this.catalogPages = new ClientCatalogPages(cfg, (reason, method) => this.reports.pageRefused(reason, method));
    this.reports = new ServerReports(cfg, this.stats, (message, said) => this.fail('protocol_error', message, { code: 'protocol_error', words: said }));
    this.server = new ServerChannel(io.serverIn, io.serverOut, cfg.channel, {
      message: (msg, bytes) => {
        // A server's ping carries nothing and is answered by any client at any time: it passes at once, and no
        // request, the client's or the warden's, is relayed until its pong has (early-pings.ts). On a
        // 2026-07-28 connection (or a probe of one) there are no pings: it goes where the era's requests go.
        if (msg.kind === 'request' && msg.method === 'ping' && !this.modern.active) {
          // Only once the load check passed (nothing reaches the client before it), bare and under an id of the
          // warden's: its params and id carry nothing the client needs and nothing judged.
          const ping = this.pings.relay(msg.id);
          void this.surface.passedBeforeFirstByte().then((ok) => ok && this.toClient(ping));
        } else this.queue.push({ from: 'server', msg, bytes, seq: this.seq++ });
      },
      answer: (answers, msg, bytes) => this.queue.push({ from: 'server', answers, msg, bytes, seq: this.seq++ }),
      refused: (reason, detail) => {
        if (!this.stopped) this.reports.refused(reason, detail);
      },
      unverified: (err) => this.failFrom(err),
      noise: (bytes, reason) => this.reports.noise(bytes, reason),
      inadmissible: (err) => this.failFrom(err),
      oversize: () => {
        this.stats.oversizeLines++;
        this.fail('protocol_error', `the server sent a line over the ${cfg.channel.maxLine}-byte cap; the session was closed`, { code: 'protocol_error', words: words`it sent a line over the ${cfg.channel.maxLine}-byte cap` });
      },
      end: () => this.queue.end('server'),
    }, { verifyWriter: cfg.verifyWriter, beforeOwnRequest: () => this.pings.answered(), firstLine: () => void this.surface.startLoadCheck() });
    this.surface = new SurfaceGate(this.server, cfg, this.rules, (err) => this.failFrom(err), () => this.seq);
    this.modern = new ModernSession({
      ...{ cfg, refuser: this.refuser, server: this.server, surface: this.surface, reports: this.reports, stopped: () => this.stopped, failFrom: (err) => this.failFrom(err) },
      ...{ toClient: (bytes) => this.toClient(bytes), forward: (msg, bytes, ownId) => this.forwardRequest(msg, bytes, ownId), admitCall: (msg, bytes, asked, modern) => this.admitCall(msg, bytes, asked, modern), judged: () => (this.hold.released = true) },
    });
    this.notifications = { refuser: this.refuser, rules: this.rules, modern: this.modern, server: this.server, toServer: (b) => this.toServer(b), swallowInitialized: () => this.hold.swallowInitialized && !(this.hold.swallowInitialized = false) };
    this.hold = new HandshakeHold({
      ...{ cfg, rules: this.rules, surface: this.surface, reports: this.reports, forward: (msg, bytes) => this.forwardRequest(msg, bytes) },
      ...{ toClient: (bytes) => this.toClient(bytes), failFrom: (err) => this.failFrom(err), stopped: () => this.stopped, onServerItem: (item) => this.onServerItem(item) },
    });
    this.relay = {
      ...{ cfg, refuser: this.refuser, rules: this.rules, surface: this.surface, modern: this.modern, reports: this.reports, catalogPages: this.catalogPages, pings: this.pings },
      ...{ released: () => this.hold.released, stopped: () => this.stopped, toClient: (bytes) => this.toClient(bytes), toServer: (bytes) => this.toServer(bytes) },
    };
  }

  start(): void {
    const framer = new LineFramer(this.cfg.channel.maxLine, {
      line: (bytes) => {
        if (this.owed) return this.owed.line(bytes);
        this.clientLines++;
        // The answer to a question of the warden's goes to it at once (the call it is about waits, not the queue).
        if (this.rules?.questions.mayAnswer(bytes) && this.rules.questions.take(classify(bytes, this.cfg.channel.json))) return;
        if (!this.pings.mayAnswer(bytes) || !this.passedPong(bytes)) this.queue.push({ from: 'client', bytes });
      },
      oversize: (seen) => {
        this.stats.oversizeLines++;
        this.stats.refusedClientLines++;
        this.cfg.report(`a client message exceeded the ${this.cfg.channel.maxLine}-byte line cap (${seen}+ bytes); it was not forwarded`);
        this.toClient(errorResponse('null', INVALID_REQUEST, `mcp-warden: message exceeds the ${this.cfg.channel.maxLine}-byte line cap; not forwarded`));
      },
    });
    this.io.clientIn.on('data', (chunk: Buffer) => framer.push(chunk));
    this.io.clientIn.on('end', () => {
      const rest = framer.rest();
      if (this.owed) {
        if (rest) this.owed.line(rest);
        return this.owed.end();
      }
      if (rest) this.queue.push({ from: 'client', bytes: rest });
      this.queue.end('client');
    });
    this.io.clientIn.on('error', () => (this.owed ? this.owed.end() : this.queue.end('client')));
  }

  // ---- client to server ----

  /** The client's answer to a ping let through early goes to the server at once, ahead of what is queued, with
   *  the server's id; one to a ping forgotten goes nowhere. */
  private passedPong(bytes: Buffer): boolean {
    const msg = classify(bytes, this.cfg.channel.json);
    if (!this.pings.isAnswer(msg)) return false;
    const pong = this.pings.settle(msg, bytes);
    if (pong) this.toServer(pong);
    return true;
  }

  /** A line of the client's; `asked`: a tools/call the user accepted, back from its question. */
  private async onClientLine(bytes: Buffer, asked = false): Promise<void> {
    const msg = classify(bytes, this.cfg.channel.json);
    if (msg.kind === 'invalid') {
      this.stats.refusedClientLines++;
      this.cfg.report(`refused a client line that is not an unambiguous JSON-RPC message (${msg.reason})`);
      const syntax = msg.reason.startsWith('syntax') || msg.reason.startsWith('invalid_utf8');
      this.toClient(errorResponse(msg.id ?? 'null', syntax ? PARSE_ERROR : INVALID_REQUEST, `mcp-warden: not forwarded: ${escaped(msg.reason)}`));
      return;
    }
    if (msg.kind === 'batch') {
      refuseBatch(this.refuser, msg.value);
      return;
    }
    if (msg.kind !== 'response' && !this.modern.admit(msg)) return; // the era of the connection (proxy/era.ts)
    if (msg.kind === 'request') {
      await this.onClientRequest(msg, bytes, asked);
      return;
    }
    if (msg.kind === 'notification') relayClientNotification(this.notifications, msg.method, msg.value, bytes);
    else this.toServer(bytes); // the client's answer to a request of the server's (its ids)
  }

  /** A request of the client's, by its method and the session's state (client-methods.ts). */
  private async onClientRequest(msg: ClientRequestMessage, bytes: Buffer, asked: boolean): Promise<void> {
    if (refuseAmbiguousParams(this.refuser, msg.id, msg.method, msg.value.get('params'))) return;
    this.deciding = msg.id;
    try {
      await this.decide(msg, bytes, asked);
    } finally {
      this.deciding = undefined;
    }
  }

  private async decide(msg: ClientRequestMessage, bytes: Buffer, asked: boolean): Promise<void> {
    if (this.modern.active) return this.modern.onRequest(msg, bytes, asked);
    const action = requestAction(msg.method, this.hold.state);
    if (action.do === 'answer_discover') answerDiscover(this.refuser, msg.id);
    else if (action.do === 'refuse') refuseRequest(this.refuser, msg.id, msg.method, action.why);
    else if (action.do === 'gate_initialize') await this.hold.gateInitialize(msg, bytes);
    else if (action.do === 'admit_call') {
      const out = await this.admitCall(msg, bytes, asked);
      if (out) await this.forwardRequest(out.msg, out.bytes);
    } else if (action.do === 'admit_read') {
      if (admitRead(this.refuser, this.surface.judge?.reads, msg.id, msg.method, msg.value)) await this.forwardRequest(msg, bytes);
    } else await this.forwardRequest(msg, bytes);
  }

  /** Relays a client request to the server (once every ping passed early is answered); undefined when the
   *  session stopped meanwhile. */
  private async forwardRequest(msg: ClientRequestMessage, bytes: Buffer, ownId = false): Promise<ClientRequest | undefined> {
    await this.pings.answered();
    if (this.stopped) return undefined;
    const forwarded = (ownId && this.server.forwardOwnId(msg, bytes)) || this.server.forward(msg, bytes);
    this.toServer(forwarded.bytes);
    return forwarded.request;
  }

  /**
   * Decides a tools/call: re-lists first when due; refuses a tool not approved on this session; then the
   * operator's rules: the message to forward (with fixed values added), or undefined when it was refused or is
   * held for the user's answer (put back in the queue once accepted, `asked`).
   */
  private async admitCall(msg: ClientRequestMessage, bytes: Buffer, asked: boolean, modern?: ModernAsk): Promise<{ msg: ClientRequestMessage; bytes: Buffer; asked?: boolean } | undefined> {
    const params = msg.value.get('params');
    const name = params instanceof Map ? params.get('name') : undefined;
    const toolName = typeof name === 'string' ? name : '';
    if (asked && !this.rules?.resume(msg.id)) return undefined; // cancelled by the client since the user's yes
    if (this.hold.released) {
      await this.surface.beforeCall();
      if (this.stopped) return undefined;
    }
    const judge = this.surface.judge;
    if (!judge?.approved.has(toolName)) {
      refuseCall(this.refuser, msg.id, toolName, judge !== undefined);
      return undefined;
    }
    if (!this.rules) return { msg, bytes };
    if (modern) return this.rules.admitModern(msg, bytes, modern); // revision 2026-07-28: ask as input_required
    return this.rules.admit(msg, bytes, () => this.queue.push({ from: 'client', bytes, asked: true }), asked);
  }

  // ---- server to client ----

  private async onServerItem(item: ServerItem): Promise<void> {
    if (this.hold.state === 'initializing') {
      // Nothing reaches the client before the surface is verified.
      if ('answers' in item && item.answers.serverId === this.hold.initServerId) await this.hold.handshake(item.msg.value, item.bytes);
      else this.hold.held.hold(item);
      return;
    }
    if (this.hold.state === 'new' && !this.modern.active && !('answers' in item)) {
      // Before any handshake only pings were relayed: their answers pass, what the server says on its own waits.
      this.hold.held.hold(item);
      return;
    }
    if ('answers' in item) await relayServerAnswer(this.relay, item.answers, item.msg, item.bytes);
    else await relayServerMessage(this.relay, item.msg, item.bytes, item.seq);
  }


  // ---- writing and closing ----

  private toServer(bytes: Line): void {
    if (!this.server.write(bytes)) {
      this.io.clientIn.pause();
      this.server.onDrain(() => this.io.clientIn.resume());
    }
  }

  private toClient(bytes: Line): void {
    const out = this.io.clientOut;
    if (this.stopped || out.destroyed || out.writableEnded) return;
    if (!writeLine(out, bytes)) {
      this.io.serverOut.pause();
      out.once('drain', () => this.io.serverOut.resume());
    }
  }

  private failFrom(err: unknown): void {
    if (err instanceof SurfaceRefusal) this.fail('surface_refused', `server '${this.cfg.serverId}' was refused: ${err.message}`, err.said);
    else if (err instanceof InadmissibleError) {
      this.cfg.audit({ event: 'surface_inadmissible', server: this.cfg.serverId, reason: err.reason });
      this.fail('inadmissible', `server '${this.cfg.serverId}' served a tool surface that cannot be admitted: ${err.reason}`, { code: 'inadmissible', ...(err.said ? { words: err.said } : {}) });
    } else if (err instanceof ProtocolError) this.fail('protocol_error', `server '${this.cfg.serverId}': ${err.message}`, { code: 'protocol_error', ...(err.said ? { words: err.said } : {}) });
    else this.fail('verification_failed', err instanceof Error ? err.message : String(err), { code: 'verification_failed', ...(err instanceof WardenError ? { wardenCode: err.code } : {}) });
  }

  /** Closes the session: every request still waiting (the held initialize, and the one being decided, included:
   *  a 2026-07-28 request whose judge refused the server, a call whose re-list did) gets the warden's sentence
   *  for `said` (refusal-text.ts); `message`, the detail, goes to stderr and the audit's end. */
  fail(cause: ClosingCause, message: string, said: Said = { code: cause }): void {
    if (this.stopped) return;
    this.cfg.report(message);
    const waiting = new Set(this.server.clientRequestsWaiting().map((r) => r.clientId));
    if (this.hold.initId && !this.hold.released) waiting.add(this.hold.initId);
    if (this.deciding !== undefined) waiting.add(this.deciding);
    for (const id of waiting) this.toClient(sessionClosed(id, this.cfg.serverId, cause, said));
    // Ended before the relay read anything of the client's (its initialize still in the pipe): the first request
    // it sends is answered the same way, by this session's own framer, so no line is read twice or lost.
    if (waiting.size === 0 && this.clientLines === 0) this.owed = new OwedFirstAnswer(this.io.clientIn, this.io.clientOut, (id) => sessionClosed(id, this.cfg.serverId, cause, said), this.cfg.channel.json);
    this.rules?.close();
    this.stopped = true;
    this.queue.close();
    this.finish({ cause, message });
  }

  /** Resolves once a request owed the session's end (see fail) was answered, or the client's stdin ended; at
   *  once when none is owed. */
  owedAnswer(): Promise<void> {
    return this.owed?.done ?? Promise.resolve();
  }

  private finish(end: SessionEnd): void {
    if (this.finished) return;
    this.finished = true;
    this.resolveEnd(end);
  }
}
