import { randomBytes } from 'node:crypto';
import type { Classified, IdSpan } from '../protocol/message.js';
import { withId } from '../protocol/message.js';
import type { Line } from '../protocol/line.js';

// A server may ping the client at any time, also before the session is released. The warden lets those pings
// through at once and relays no request, the client's or its own, until the client has answered them. Held
// until the release, a pong would tell the server when the handshake (the warden's listing and canaries) is
// over; and if only the warden's requests waited for pongs, a request arriving while a ping is unanswered
// would be the client's (docs/adr/0012).
//
// A ping reaches the client bare and under an id of the warden's, never the server's: a server's id is free text
// (any JSON string up to the line cap), and a ping passes before anything of the server's was judged, also for a
// server the lock then refuses (docs/adr/0051). The client's answer goes back to the server with the server's id
// in place of the warden's, every other byte as the client wrote it. The warden's ids carry a random part of the
// session, so no request of the server's can take one and have the client's answer to it read as a pong.
//
// What is kept of the pings still open is bounded: past MAX_OPEN pings or MAX_OPEN_BYTES of the server's ids,
// the oldest is forgotten as if its wait had run out (its answer then goes nowhere: test/attack12/ping-ids); a
// ping whose id alone is longer than that is relayed and forgotten at once. Forgetting holds back the client's requests and
// the warden's alike, so it tells the server nothing about whose a request is.

/** Pings kept open at most, and the bytes of their (the server's) ids. */
const MAX_OPEN = 64;
const MAX_OPEN_BYTES = 64 * 1024;

const ID_PREFIX = 'mcp-warden-ping-';
const ID_MARK = Buffer.from(ID_PREFIX);
const BACKSLASH = 0x5c;

/** The open pings: a server's id (JSON text) and where the warden's id sits in the client's answer. */
type Pong = { kind: 'response'; id: string; idSpan: IdSpan };

export class EarlyPings {
  private readonly prefix = `${ID_PREFIX}${randomBytes(12).toString('hex')}-`;
  /** The JSON text every id of the warden's pings starts with. */
  private readonly idStart = JSON.stringify(this.prefix).slice(0, -1);
  private next = 0;
  /** The open pings, oldest first: the warden's id (JSON text) to the server's. */
  private readonly open = new Map<string, string>();
  private openBytes = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly maxWaitMs = 2000) {}

  get pending(): boolean {
    return this.open.size > 0;
  }

  /** A server's ping (its id as JSON text): the line that asks the client. */
  relay(serverId: string): Buffer {
    const own = JSON.stringify(this.prefix + this.next++);
    if (serverId.length > MAX_OPEN_BYTES) return this.pingLine(own); // too long to keep: as if its wait ran out
    this.open.set(own, serverId);
    this.openBytes += serverId.length;
    for (const oldest of this.open.keys()) {
      if (this.open.size <= MAX_OPEN && this.openBytes <= MAX_OPEN_BYTES) break;
      this.forget(oldest);
    }
    return this.pingLine(own);
  }

  private pingLine(own: string): Buffer {
    return Buffer.from(`{"jsonrpc":"2.0","id":${own},"method":"ping"}\n`);
  }

  /** Whether a client line may answer one of the warden's pings (a cheap test before parsing it). */
  mayAnswer(line: Buffer): boolean {
    // The id may be written with escapes ("\u006dcp-warden-ping-…"): a line with a backslash is read too.
    return this.next > 0 && (line.includes(ID_MARK) || line.includes(BACKSLASH));
  }

  /** Whether a client message answers a ping of the warden's, open or forgotten (then it goes nowhere). */
  isAnswer(msg: Classified): msg is Classified & Pong {
    return msg.kind === 'response' && msg.id.startsWith(this.idStart);
  }

  /** The client's answer to an open ping, for the server: its bytes with the server's id in place of the
   *  warden's; undefined when the ping was forgotten. The warden's requests go on once none is open. */
  settle(msg: Pong, line: Buffer): Line | undefined {
    const serverId = this.open.get(msg.id);
    if (serverId === undefined) return undefined;
    this.forget(msg.id);
    if (this.open.size === 0) this.release();
    return withId(line, msg.idSpan, Buffer.from(serverId));
  }

  private forget(own: string): void {
    const serverId = this.open.get(own);
    if (serverId === undefined) return;
    this.open.delete(own);
    this.openBytes -= serverId.length;
  }

  /** Resolves once every passed ping is answered, or after the bound (then they are forgotten). */
  answered(): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.open.clear();
        this.openBytes = 0;
        this.release();
      }, this.maxWaitMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private release(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
