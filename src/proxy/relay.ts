import type { Readable, Writable } from 'node:stream';
import { LineFramer } from '../protocol/framing.js';
import { classify, errorResponse } from '../protocol/message.js';
import type { ReadLimits } from '../protocol/json/reader.js';

// The byte-exact relay between a client and a server. Every message is forwarded as the bytes that arrived,
// in order; nothing is re-serialized. What the warden does not forward it reports:
// - a client line that is not a JSON-RPC message the warden can read unambiguously (invalid JSON, duplicate
//   keys, invalid UTF-8) is answered with a JSON-RPC error and not forwarded, so the server can never read a
//   message differently from the warden;
// - a server line that is not JSON (log noise on stdout) is counted and reported, never forwarded;
// - a line over the cap: from the client, answered with an error; from the server, the session is closed
//   (fail closed) and every request still waiting is answered with an error saying why.

export interface RelayLimits {
  /** Largest line accepted in either direction, in bytes. */
  maxLine: number;
  json: ReadLimits;
}

export const DEFAULT_RELAY_LIMITS: RelayLimits = {
  maxLine: 4 * 1024 * 1024,
  json: { maxBytes: 4 * 1024 * 1024, maxDepth: 64 },
};

export interface RelayStats {
  nonJsonLines: number;
  oversizeLines: number;
  refusedClientLines: number;
}

export interface RelayEndpoints {
  clientIn: Readable;
  clientOut: Writable;
  serverIn: Writable;
  serverOut: Readable;
}

export interface RelayHooks {
  /** Runs once before the first server line is forwarded; a throw (with a message) closes the session. */
  beforeFirstServerLine?: () => Promise<void>;
  /** A human-readable report for stderr. */
  report: (message: string) => void;
}

export type RelayEnd =
  | { cause: 'client_eof' }
  | { cause: 'server_eof' }
  | { cause: 'protocol_error'; message: string }
  | { cause: 'verification_failed'; message: string };

const INVALID_REQUEST = -32600;
const PARSE_ERROR = -32700;
const WARDEN_REFUSED = -32001;

function preview(line: Buffer): string {
  const s = JSON.stringify(line.subarray(0, 80).toString('utf8'));
  return line.length > 80 ? `${s}…` : s;
}

/**
 * Relays until one side ends or the session is closed; `ended` resolves with the first of these. After a
 * client EOF, the server's remaining output is still relayed until it exits; after fail(), nothing is.
 */
export class Relay {
  readonly stats: RelayStats = { nonJsonLines: 0, oversizeLines: 0, refusedClientLines: 0 };
  private readonly pending = new Set<string>();
  private serverQueue: Promise<void> | undefined;
  private firstServerLine = true;
  private closed = false;
  private stopped = false;
  private resolveEnd!: (end: RelayEnd) => void;
  readonly ended: Promise<RelayEnd> = new Promise((r) => (this.resolveEnd = r));

  constructor(
    private readonly io: RelayEndpoints,
    private readonly limits: RelayLimits,
    private readonly hooks: RelayHooks,
  ) {}

  start(): void {
    const fromClient = new LineFramer(this.limits.maxLine, {
      line: (bytes) => this.onClientLine(bytes),
      oversize: (seen) => {
        this.stats.oversizeLines++;
        this.stats.refusedClientLines++;
        this.hooks.report(`a client message exceeded the ${this.limits.maxLine}-byte line cap (${seen}+ bytes); it was not forwarded`);
        this.toClient(errorResponse('null', INVALID_REQUEST, `mcp-warden: message exceeds the ${this.limits.maxLine}-byte line cap; not forwarded`));
      },
    });
    const fromServer = new LineFramer(this.limits.maxLine, {
      line: (bytes) => this.enqueueServerLine(bytes),
      oversize: (seen) => {
        this.stats.oversizeLines++;
        this.fail('protocol_error', `the server sent a line over the ${this.limits.maxLine}-byte cap (${seen}+ bytes); the session was closed`);
      },
    });
    this.io.clientIn.on('data', (chunk: Buffer) => fromClient.push(chunk));
    this.io.clientIn.on('end', () => {
      const rest = fromClient.rest();
      if (rest) this.onClientLine(rest);
      this.io.serverIn.end();
      this.finish({ cause: 'client_eof' });
    });
    this.io.serverOut.on('data', (chunk: Buffer) => fromServer.push(chunk));
    this.io.serverOut.on('end', () => {
      const rest = fromServer.rest();
      if (rest) this.enqueueServerLine(rest);
      void (this.serverQueue ?? Promise.resolve()).then(() => this.finish({ cause: 'server_eof' }));
    });
    this.io.clientIn.on('error', () => this.finish({ cause: 'client_eof' }));
  }

  private onClientLine(bytes: Buffer): void {
    if (this.stopped) return;
    const msg = classify(bytes, this.limits.json);
    if (msg.kind === 'invalid') {
      this.stats.refusedClientLines++;
      this.hooks.report(`refused a client line that is not an unambiguous JSON-RPC message (${msg.reason})`);
      this.toClient(errorResponse('null', msg.reason.startsWith('syntax') || msg.reason.startsWith('invalid_utf8') ? PARSE_ERROR : INVALID_REQUEST, `mcp-warden: not forwarded: ${msg.reason}`));
      return;
    }
    if (msg.kind === 'request') this.pending.add(msg.id);
    this.write(this.io.serverIn, this.io.clientIn, bytes);
  }

  /** Server lines are handled at once, except while the first-line check runs: then they queue, in order. */
  private enqueueServerLine(bytes: Buffer): void {
    if (this.firstServerLine && this.hooks.beforeFirstServerLine) {
      this.firstServerLine = false;
      const check = this.hooks.beforeFirstServerLine;
      this.queue(() => check().catch((err: Error) => this.fail('verification_failed', err.message)));
    }
    this.firstServerLine = false;
    if (this.serverQueue) this.queue(async () => this.onServerLine(bytes));
    else this.onServerLine(bytes);
  }

  private queue(step: () => Promise<void>): void {
    const q = (this.serverQueue ?? Promise.resolve()).then(step);
    this.serverQueue = q;
    void q.then(() => {
      if (this.serverQueue === q) this.serverQueue = undefined;
    });
  }

  private onServerLine(bytes: Buffer): void {
    if (this.stopped) return;
    const msg = classify(bytes, this.limits.json);
    if (msg.kind === 'invalid') {
      this.stats.nonJsonLines++;
      if (this.stats.nonJsonLines <= 5) {
        this.hooks.report(`the server wrote a line to stdout that is not a JSON-RPC message (${msg.reason}); not forwarded: ${preview(bytes)}`);
      }
      return;
    }
    if (msg.kind === 'response') this.pending.delete(msg.id);
    this.write(this.io.clientOut, this.io.serverOut, bytes);
  }

  /** Writes with backpressure: the source pauses until the destination drains. */
  private write(dest: Writable, source: Readable, bytes: Buffer): void {
    if (dest.destroyed || dest.writableEnded) return;
    if (!dest.write(bytes)) {
      source.pause();
      dest.once('drain', () => source.resume());
    }
  }

  private toClient(bytes: Buffer): void {
    if (!this.io.clientOut.destroyed && !this.io.clientOut.writableEnded) this.io.clientOut.write(bytes);
  }

  /** Closes the session: answers every waiting request with the reason, and stops relaying. */
  fail(cause: 'protocol_error' | 'verification_failed', message: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.hooks.report(message);
    for (const id of this.pending) this.toClient(errorResponse(id, WARDEN_REFUSED, `mcp-warden closed the session: ${message}`));
    this.pending.clear();
    this.finish({ cause, message });
  }

  private finish(end: RelayEnd): void {
    if (this.closed) return;
    this.closed = true;
    this.resolveEnd(end);
  }
}
