import type { Readable, Writable } from 'node:stream';
import { LineFramer } from '../protocol/framing.js';
import type { JsonObject, JsonValue, ReadLimits } from '../protocol/json/reader.js';
import { classify, type Classified } from '../protocol/message.js';
import { InadmissibleError } from '../surface/admit.js';

// The warden's side of the server's stdio: frames its stdout, tells apart the responses to the warden's own
// requests (ids in a reserved string namespace no client may use; they never reach the client) from
// everything else, and writes to its stdin with backpressure.

export const OWN_ID_PREFIX = 'mcp-warden-';

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

export type ServerMessage = Exclude<Classified, { kind: 'invalid' }>;

export interface ChannelEvents {
  /** A message that is not a response to the warden's own request, with its original bytes. */
  message(msg: ServerMessage, bytes: Buffer): void;
  /** A line that is not a JSON-RPC message (log noise). */
  noise(bytes: Buffer, reason: string): void;
  /** A message that no verdict can be built on (the session must close). */
  inadmissible(err: InadmissibleError): void;
  /** A line over the cap; the channel is unusable after this. */
  oversize(seen: number): void;
  /** The server closed its stdout; `rest` is a final line without newline, if any. */
  end(): void;
}

export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

interface Pending {
  resolve: (response: JsonObject) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  method: string;
}

export class ServerChannel {
  private nextId = 1;
  private readonly pending = new Map<string, Pending>();
  private ended = false;

  constructor(
    private readonly serverIn: Writable,
    serverOut: Readable,
    private readonly limits: ChannelLimits,
    private readonly on: ChannelEvents,
  ) {
    const framer = new LineFramer(limits.maxLine, {
      line: (bytes) => this.onLine(bytes),
      oversize: (seen) => {
        this.failAll(new ProtocolError(`the server sent a line over the ${limits.maxLine}-byte cap`));
        on.oversize(seen);
      },
    });
    serverOut.on('data', (chunk: Buffer) => framer.push(chunk));
    serverOut.on('end', () => {
      const rest = framer.rest();
      if (rest) this.onLine(rest);
      this.ended = true;
      this.failAll(new ProtocolError('the server closed its stdout'));
      on.end();
    });
  }

  private onLine(bytes: Buffer): void {
    const msg = classify(bytes, this.limits.json);
    if (msg.kind === 'invalid') {
      // JSON that cannot be read one way only (duplicate keys, invalid UTF-8, lone surrogates, too deep) may be
      // read differently by the client: fail closed. Anything else that is not a message is log noise.
      if (/^(duplicate_key|invalid_utf8|lone_surrogate|too_deep|too_large):/.test(msg.reason)) {
        const err = new InadmissibleError(`the server sent a message that cannot be read unambiguously (${msg.reason})`);
        this.failAll(err);
        this.on.inadmissible(err);
        return;
      }
      this.on.noise(bytes, msg.reason);
      return;
    }
    if (msg.kind === 'response' && msg.id.startsWith(`"${OWN_ID_PREFIX}`)) {
      const p = this.pending.get(msg.id);
      if (!p) return; // a late answer to a request that timed out: never the client's
      this.pending.delete(msg.id);
      clearTimeout(p.timer);
      p.resolve(msg.value);
      return;
    }
    this.on.message(msg, bytes);
  }

  /** Writes bytes to the server; false if it can take no more (the caller may wait for 'drain'). */
  write(bytes: Buffer | string): boolean {
    if (this.serverIn.destroyed || this.serverIn.writableEnded) return true;
    return this.serverIn.write(bytes);
  }

  onDrain(fn: () => void): void {
    this.serverIn.once('drain', fn);
  }

  end(): void {
    if (!this.serverIn.writableEnded) this.serverIn.end();
  }

  /** Sends a request of the warden's own and resolves with its result; an error response rejects. */
  async request(method: string, params: Record<string, unknown> | undefined): Promise<JsonValue | undefined> {
    const response = await this.requestMessage(method, params);
    const error = response.get('error');
    if (error !== undefined) {
      const m = error instanceof Map ? error.get('message') : undefined;
      throw new ProtocolError(`the server answered ${method} with an error: ${typeof m === 'string' ? m.slice(0, 200) : 'no message'}`);
    }
    return response.get('result');
  }

  /** Sends a request of the warden's own and resolves with the whole response message (result or error). */
  requestMessage(method: string, params: Record<string, unknown> | undefined): Promise<JsonObject> {
    if (this.ended) return Promise.reject(new ProtocolError('the server closed its stdout'));
    const id = JSON.stringify(`${OWN_ID_PREFIX}${this.nextId++}`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ProtocolError(`the server did not answer ${method} within ${this.limits.requestTimeoutMs} ms`));
      }, this.limits.requestTimeoutMs);
      this.pending.set(id, { resolve, reject, timer, method });
      this.write(`{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)}${params === undefined ? '' : `,"params":${JSON.stringify(params)}`}}\n`);
    });
  }

  notify(method: string): void {
    this.write(`{"jsonrpc":"2.0","method":${JSON.stringify(method)}}\n`);
  }

  private failAll(err: Error): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(err);
      this.pending.delete(id);
    }
  }
}
