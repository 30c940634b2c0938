import { joinLine, lineLength, type Line } from '../protocol/line.js';
import type { ReadLimits } from '../protocol/json/reader.js';
import { classify } from '../protocol/message.js';
import type { ClientRequest, ResponseMessage, ServerMessage } from './channel.js';
import { waitingCost } from './ordered-queue.js';

// A server message that has to wait (behind the warden's verification, or held until the initialize result)
// keeps its bytes and its envelope, not its value: what waits is bounded in bytes (ordered-queue.ts), and a
// value can cost seventy times its bytes (a line of `[{}]` elements: a Map and an array per five bytes). The
// value is read again from the same bytes, which nothing changes, when it is first used: the reader is
// deterministic, so it is the value the message was classified with (the id member aside, which an answer
// already carries as the client's: nothing reads it).

const WAITING = Symbol('waiting');

/** Slack a waiting line's buffer may have beyond its bytes before the line is copied into one of its own. */
const SLACK = 1024;
/** The size of node's shared pool slab, which a short buffer from Buffer.from may be a view of. */
const POOL_SLAB = Buffer.poolSize;

/**
 * The line in memory of its own: a line that arrived within one read is a view of that read's buffer (up to
 * 64 KiB, most of it other lines, or log noise that is counted nowhere), and a view keeps the whole buffer
 * alive (test/attack11/pinned-chunks). Copied into a buffer of exactly its size (not node's shared pool, whose
 * 8 KiB slabs a short line would keep alive in the same way); a line that already owns its buffer is kept.
 */
export function ownBytes(line: Line): Line {
  if (Buffer.isBuffer(line)) return line.buffer.byteLength > line.length + SLACK ? own(line) : line;
  // A long answer in pieces (protocol/line.ts): views of its own line buffer, and the new id (a few bytes of
  // node's pool, whose slab of 8 KiB it keeps).
  const buffers = new Set(line.map((piece) => piece.buffer));
  let kept = 0;
  for (const b of buffers) kept += b.byteLength;
  return kept > lineLength(line) + POOL_SLAB + SLACK ? own(Buffer.concat(line as Buffer[])) : line;
}

function own(b: Buffer): Buffer {
  const out = Buffer.allocUnsafeSlow(b.length);
  b.copy(out);
  return out;
}

type Waitable = ServerMessage | ResponseMessage;

/** `msg` without its value in memory: the value is read from `bytes` again on first use. */
export function waiting<M extends Waitable>(msg: M, bytes: Line, limits: ReadLimits): M {
  if (WAITING in msg) return msg;
  const envelope =
    msg.kind === 'response'
      ? { kind: msg.kind, id: msg.id, idSpan: msg.idSpan }
      : msg.kind === 'request'
        ? { kind: msg.kind, method: msg.method, id: msg.id, idSpan: msg.idSpan }
        : { kind: msg.kind, method: msg.method };
  // The getter keeps the bytes and the kind only: a reference to `msg` would keep its value alive.
  const kind = msg.kind;
  let value: M['value'] | undefined;
  const out = { ...envelope, [WAITING]: true } as unknown as M;
  Object.defineProperty(out, 'value', {
    enumerable: true,
    get(): M['value'] {
      if (value === undefined) {
        // An answer's bytes carry the client's id now, which may be longer than the one the server was given: the
        // size bound was applied to the server's bytes, and to the client's id when its request was read.
        const line = joinLine(bytes);
        const again = classify(line, { ...limits, maxBytes: Math.max(limits.maxBytes, line.length) });
        // The same bytes classify the same way; anything else is a defect, and the session fails closed on it.
        if (again.kind !== kind) throw new Error(`a waiting server message read again as ${again.kind}, not ${kind}`);
        value = again.value as M['value'];
      }
      return value;
    },
  });
  return out;
}

/** A message from the server as the session queues it: a request or notification, or an answer to a client
 *  request (its id already the client's own). */
export type ServerItem =
  | { from: 'server'; msg: ServerMessage; bytes: Buffer; seq: number }
  | { from: 'server'; answers: ClientRequest; msg: ResponseMessage; bytes: Line; seq: number };

/** A server item as it waits: bytes of its own, and its value read again on first use. */
export function waitingItem(item: ServerItem, limits: ReadLimits): ServerItem {
  if ('answers' in item) {
    const bytes = ownBytes(item.bytes);
    return { ...item, bytes, msg: waiting(item.msg, bytes, limits) };
  }
  const bytes = ownBytes(item.bytes) as Buffer;
  return { ...item, bytes, msg: waiting(item.msg, bytes, limits) };
}

/** What the server sent before its initialize result, kept as it waits, in order, and what it counts against
 *  the session's bound on waiting messages. */
export class HeldItems {
  private readonly items: ServerItem[] = [];
  private counted = 0;

  constructor(private readonly limits: ReadLimits) {}

  /** What the held items count against the bound (ordered-queue.ts waitingCost). */
  get cost(): number {
    return this.counted;
  }

  hold(item: ServerItem): void {
    const kept = waitingItem(item, this.limits);
    this.items.push(kept);
    this.counted += waitingCost(kept.bytes);
  }

  /** Every item held so far, oldest first; each stops counting as it is taken. */
  *take(): Generator<ServerItem> {
    for (const item of this.items.splice(0)) {
      this.counted -= waitingCost(item.bytes);
      yield item;
    }
  }
}
