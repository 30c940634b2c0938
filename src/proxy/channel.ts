import type { Readable, Writable } from 'node:stream';
import { LineFramer } from '../protocol/framing.js';
import { writeLine, type Line } from '../protocol/line.js';
import type { JsonObject, JsonValue, ReadLimits } from '../protocol/json/reader.js';
import { AMBIGUOUS_BOTH, AMBIGUOUS_CR, AMBIGUOUS_JSONRPC, classify, withId, type Classified } from '../protocol/message.js';
import { ownName, words, type OwnWords } from '../own-words.js';
import { printable } from '../escape.js';
import { InadmissibleError } from '../surface/admit.js';
import { RequestStyle } from './request-style.js';

// The warden's side of the server's stdio. Every request the server receives, the client's and the warden's
// own alike, carries an id from one counter (0, 1, 2… as an SDK client numbers them): the server cannot tell
// whose a request is by its id (docs/adr/0012). A response is accepted only when its id is, lexeme for
// lexeme, the id of a request still waiting; anything else (another form of the same number, a string, an
// unknown or repeated id, a batch) is refused and never reaches the client. An answer to the client gets the
// client's own id back, byte for byte; every other byte of it is relayed as it came.

export interface ChannelLimits {
  maxLine: number;
  json: ReadLimits;
  /** How long the warden waits for a response to its own request. */
  requestTimeoutMs: number;
}

export const DEFAULT_CHANNEL_LIMITS: ChannelLimits = {
  maxLine: 4 * 1024 * 1024,
  json: { maxBytes: 4 * 1024 * 1024, maxDepth: 64 },
  requestTimeoutMs: 30_000,
};

/** A request or notification from the server (its requests use the server's own ids, towards the client). */
export type ServerMessage = Extract<Classified, { kind: 'request' | 'notification' }>;
export type ClientRequestMessage = Extract<Classified, { kind: 'request' }>;
export type ResponseMessage = Extract<Classified, { kind: 'response' }>;

/** A client request forwarded to the server, while it waits for its answer. */
export interface ClientRequest {
  method: string;
  /** The client's id as JSON text (for error answers). */
  clientId: string;
  /** The id the server was given, as JSON text. */
  serverId: string;
}

/** Why a message from the server was not forwarded. */
export type RefusedReason = 'unmatched_id' | 'late_answer' | 'batch' | 'impersonation' | 'unsubscribed' | 'not_in_era' | 'oversize_input' | 'malformed_result';

export interface ChannelEvents {
  /** A request or notification from the server, with its original bytes. */
  message(msg: ServerMessage, bytes: Buffer): void;
  /** The answer to a client request, with the client's own id restored in its bytes (a long one in pieces). */
  answer(request: ClientRequest, msg: ResponseMessage, bytes: Line): void;
  /** A message that is not forwarded: an answer to no waiting request, or a batch. */
  refused(reason: RefusedReason, detail: string): void;
  /** A line that is not a JSON-RPC message (log noise). */
  noise(bytes: Buffer, reason: string): void;
  /** A message that no verdict can be built on (the session must close). */
  inadmissible(err: InadmissibleError): void;
  /** A line over the cap; the channel is unusable after this. */
  oversize(seen: number): void;
  /** The program writing the server's stdout is no longer the one that was verified; nothing more is read. */
  unverified(err: Error): void;
  /** The server closed its stdout. */
  end(): void;
}

export interface ChannelHooks {
  /** Throws when the process writing to us is no longer the program that was verified (it exec'd another):
   *  run before each line is read; a throw ends the channel. */
  verifyWriter?: () => void;
  /** Awaited before each request of the warden's own is written (the session holds them while a ping it let
   *  through to the client is unanswered, so that the pong tells the server nothing about whose they are). */
  beforeOwnRequest?: () => Promise<void>;
  /** Told once, when the first line from the server has been read and its writer verified. */
  firstLine?: () => void;
}

export class ProtocolError extends Error {
  /** `message` for the operator; `said`, the warden's own words of it, what a client may be told. */
  constructor(
    message: string,
    readonly said?: OwnWords,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

type Waiting =
  | { owner: 'warden'; method: string; resolve: (response: JsonObject) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }
  | { owner: 'client'; request: ClientRequest; clientIdBytes: Buffer }
  | { owner: 'expired' };

/** Why a line cannot be read one way only, in the warden's words: a reason that quotes the line (a key, a path)
 *  is told by its kind alone. */
function unreadable(reason: string): OwnWords {
  if (reason === AMBIGUOUS_CR) return words`ambiguous: a carriage return inside the line, which a reader of universal newlines takes for a line end`;
  if (reason === AMBIGUOUS_BOTH) return words`ambiguous: a message with both a method and a result or error`;
  if (reason === AMBIGUOUS_JSONRPC) return words`ambiguous: its "jsonrpc" member is not "2.0"`;
  if (reason.startsWith('duplicate_key:')) return words`duplicate_key: a member named twice in one object`;
  if (reason.startsWith('invalid_utf8:')) return words`invalid_utf8: bytes that are not UTF-8`;
  if (reason.startsWith('lone_surrogate:')) return words`lone_surrogate: a string with half a surrogate pair`;
  if (reason.startsWith('too_deep:')) return words`too_deep: nesting over the warden's bound`;
  if (reason.startsWith('too_large:')) return words`too_large: a value over the warden's bound`;
  return words`ambiguous: a member that a reader ignoring case takes for one of the envelope's`;
}

const NO_EVENTS: ChannelEvents = { message() {}, answer() {}, refused() {}, noise() {}, inadmissible() {}, oversize() {}, unverified() {}, end() {} };

export class ServerChannel {
  private nextId = 0;
  private readonly waiting = new Map<string, Waiting>();
  private ended = false;
  private distrusted = false;
  private sawLine = false;
  readonly style = new RequestStyle();

  constructor(
    private readonly serverIn: Writable,
    serverOut: Readable,
    private readonly limits: ChannelLimits,
    private readonly on: ChannelEvents = NO_EVENTS,
    private readonly hooks: ChannelHooks = {},
  ) {
    const framer = new LineFramer(limits.maxLine, {
      line: (bytes) => this.onLine(bytes),
      oversize: (seen) => {
        this.failAll(new ProtocolError(`the server sent a line over the ${limits.maxLine}-byte cap`, words`it sent a line over the ${limits.maxLine}-byte cap`));
        on.oversize(seen);
      },
    });
    serverOut.on('data', (chunk: Buffer) => framer.push(chunk));
    serverOut.on('end', () => {
      const rest = framer.rest();
      if (rest) this.onLine(rest);
      this.ended = true;
      this.failAll(new ProtocolError('the server closed its stdout', words`it closed its stdout`));
      on.end();
    });
  }

  private onLine(bytes: Buffer): void {
    if (this.distrusted) return;
    try {
      this.hooks.verifyWriter?.();
    } catch (err) {
      this.distrusted = true;
      this.failAll(err as Error);
      this.on.unverified(err as Error);
      return;
    }
    if (!this.sawLine) {
      this.sawLine = true;
      this.hooks.firstLine?.();
    }
    const msg = classify(bytes, this.limits.json);
    if (msg.kind === 'invalid') {
      // JSON that cannot be read one way only (duplicate keys, invalid UTF-8, lone surrogates, too deep) may be
      // read differently by the client: fail closed. Anything else that is not a message is log noise.
      if (/^(duplicate_key|invalid_utf8|lone_surrogate|too_deep|too_large|ambiguous):/.test(msg.reason)) {
        const err = new InadmissibleError(`the server sent a message that cannot be read unambiguously (${msg.reason})`, words`it sent a message that cannot be read unambiguously (${unreadable(msg.reason)})`);
        this.failAll(err);
        this.on.inadmissible(err);
        return;
      }
      this.on.noise(bytes, msg.reason);
      return;
    }
    if (msg.kind === 'batch') {
      // The warden never sends a batch, so no batch can carry an answer it waits for; one is never forwarded.
      this.on.refused('batch', `a JSON-RPC batch of ${msg.value.length} element(s)`);
      return;
    }
    if (msg.kind !== 'response') {
      this.on.message(msg, bytes);
      return;
    }
    const w = this.waiting.get(msg.id);
    if (!w) {
      this.on.refused('unmatched_id', `an answer with id ${printable(msg.id)}, which no waiting request has`);
      return;
    }
    this.waiting.delete(msg.id);
    if (w.owner === 'expired') this.on.refused('late_answer', `a late answer to a request of the warden's that timed out (id ${msg.id})`);
    else if (w.owner === 'warden') {
      clearTimeout(w.timer);
      w.resolve(msg.value);
    } else this.on.answer(w.request, msg, withId(bytes, msg.idSpan, w.clientIdBytes));
  }

  /** Gives a client request the next id; returns what waits for its answer and the bytes to send. */
  forward(msg: ClientRequestMessage, bytes: Buffer): { request: ClientRequest; bytes: Line } {
    const serverId = String(this.nextId++);
    const request: ClientRequest = { method: msg.method, clientId: msg.id, serverId };
    const clientIdBytes = Buffer.from(bytes.subarray(msg.idSpan[0], msg.idSpan[1]));
    this.waiting.set(serverId, { owner: 'client', request, clientIdBytes });
    this.style.learn(msg.method, msg.value);
    return { request, bytes: withId(bytes, msg.idSpan, Buffer.from(serverId, 'latin1')) };
  }

  /**
   * Relays a client request under its own id: a string in the form the server writes it back (one the counter never
   * makes), not waiting. For subscriptions/listen, whose id the server stamps on the subscription's notifications
   * (docs/adr/0044). Undefined when the id cannot be kept (the caller renumbers it).
   */
  forwardOwnId(msg: ClientRequestMessage, bytes: Buffer): { request: ClientRequest; bytes: Buffer } | undefined {
    if (!msg.id.startsWith('"') || JSON.stringify(JSON.parse(msg.id)) !== msg.id || this.waiting.has(msg.id)) return undefined;
    const request: ClientRequest = { method: msg.method, clientId: msg.id, serverId: msg.id };
    this.waiting.set(msg.id, { owner: 'client', request, clientIdBytes: Buffer.from(bytes.subarray(msg.idSpan[0], msg.idSpan[1])) });
    return { request, bytes };
  }

  /** The server id of a client request still waiting, by the client's id (for a client's cancellation). */
  serverIdOf(clientId: string): string | undefined {
    for (const [serverId, w] of this.waiting) if (w.owner === 'client' && w.request.clientId === clientId) return serverId;
    return undefined;
  }

  /** Client requests still waiting for an answer, oldest first. */
  clientRequestsWaiting(): ClientRequest[] {
    const out: ClientRequest[] = [];
    for (const w of this.waiting.values()) if (w.owner === 'client') out.push(w.request);
    return out;
  }

  /** Writes bytes to the server; false if it can take no more (the caller may wait for 'drain'). */
  write(bytes: Line | string): boolean {
    if (this.serverIn.destroyed || this.serverIn.writableEnded) return true;
    return typeof bytes === 'string' ? this.serverIn.write(bytes) : writeLine(this.serverIn, bytes);
  }

  onDrain(fn: () => void): void {
    this.serverIn.once('drain', fn);
  }

  end(): void {
    if (!this.serverIn.writableEnded) this.serverIn.end();
  }

  /** Sends a request of the warden's own and resolves with its result; an error response rejects. */
  async request(method: string, params: Record<string, unknown> | undefined): Promise<JsonValue | undefined> {
    return this.raise(method, await this.requestMessage(method, params));
  }

  /** The result of a response to a request of the warden's; an error response is raised as a ProtocolError. */
  raise(method: string, response: JsonObject): JsonValue | undefined {
    const error = response.get('error');
    if (error !== undefined) {
      const m = error instanceof Map ? error.get('message') : undefined;
      throw new ProtocolError(`the server answered ${method} with an error: ${typeof m === 'string' ? printable(m, 200) : 'no message'}`, words`it answered ${ownName(method) ?? words`a request of the warden's`} with an error (its message is on the warden's stderr)`);
    }
    return response.get('result');
  }

  /** Sends a request of the warden's own and resolves with the whole response message (result or error). */
  async requestMessage(method: string, params: Record<string, unknown> | undefined): Promise<JsonObject> {
    if (this.hooks.beforeOwnRequest) await this.hooks.beforeOwnRequest();
    const id = String(this.nextId++);
    return this.ownRequest(method, id, this.style.build(method, params, id), this.limits.requestTimeoutMs);
  }

  /** Sends `line`, a request of the warden's own written whole by the caller under `id` (JSON text the counter
   *  never makes: a string), and resolves with the whole response message; silence past `timeoutMs` rejects. */
  async requestLine(method: string, id: string, line: string, timeoutMs: number): Promise<JsonObject> {
    if (this.hooks.beforeOwnRequest) await this.hooks.beforeOwnRequest();
    if (!id.startsWith('"') || this.waiting.has(id)) throw new ProtocolError(`the request id ${printable(id)} is not a free string id`);
    return this.ownRequest(method, id, line, timeoutMs);
  }

  private ownRequest(method: string, id: string, line: string, timeoutMs: number): Promise<JsonObject> {
    if (this.ended) return Promise.reject(new ProtocolError('the server closed its stdout', words`it closed its stdout`));
    if (this.distrusted) return Promise.reject(new ProtocolError('the server process is no longer the verified program', words`its process is no longer the verified program`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.set(id, { owner: 'expired' });
        reject(new ProtocolError(`the server did not answer ${method} within ${timeoutMs} ms`, words`it did not answer ${ownName(method) ?? words`a request of the warden's`} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, { owner: 'warden', method, resolve, reject, timer });
      this.write(line);
    });
  }

  notify(method: string): void {
    this.write(this.style.buildNotification(method));
  }

  private failAll(err: Error): void {
    for (const [id, w] of this.waiting) {
      if (w.owner !== 'warden') continue;
      clearTimeout(w.timer);
      w.reject(err);
      this.waiting.delete(id);
    }
  }
}
