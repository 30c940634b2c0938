// The session acts on one message at a time, in arrival order from both sides: while the warden verifies (a
// handshake, a re-list), everything behind waits. The ends of the two streams take effect once everything
// that arrived before them was handled. What waits is bounded in bytes (a server must not grow the warden's
// memory by writing while it is judged): past the bound, `overflow` is called and nothing more is taken.

import { lineLength, type Line } from '../protocol/line.js';

/** What a message that waits is counted at beyond its bytes: the objects that carry it (its envelope, the
 *  queue's entry, its buffer's header) cost a few hundred bytes however short it is. */
export const MESSAGE_OVERHEAD = 512;

/** What a waiting line counts against the bound. */
export function waitingCost(bytes: Line): number {
  return lineLength(bytes) + MESSAGE_OVERHEAD;
}

export interface Sized {
  bytes: Line;
}

export interface QueueEvents<T> {
  handle(item: T): Promise<void>;
  /** A throw from `handle`. */
  error(err: unknown): void;
  clientEnd(): void;
  serverEnd(): void;
  /** More than the bound is waiting (queued, plus what the session holds elsewhere: `extraBytes`). */
  overflow(bound: number): void;
  /** What is kept of an item that has to wait behind another (waiting-message.ts); the item itself if absent. */
  waits?(item: T): T;
}

export class OrderedQueue<T extends Sized> {
  private readonly items: T[] = [];
  private running = false;
  private closed = false;
  private bytes = 0;
  private clientEnded = false;
  private serverEnded = false;
  private clientEndDone = false;

  constructor(
    private readonly bound: number,
    private readonly on: QueueEvents<T>,
    private readonly extraBytes: () => number = () => 0,
  ) {}

  push(item: T): void {
    if (this.closed) return;
    if ((this.running || this.items.length > 0) && this.on.waits) item = this.on.waits(item);
    this.items.push(item);
    this.bytes += waitingCost(item.bytes);
    if (this.bytes + this.extraBytes() > this.bound) {
      this.on.overflow(this.bound);
      return;
    }
    if (!this.running) void this.run();
  }

  /** The client (its stdin) or the server (its stdout) ended: takes effect after what arrived before. */
  end(side: 'client' | 'server'): void {
    if (side === 'client') this.clientEnded = true;
    else this.serverEnded = true;
    if (!this.running) this.drainEnds();
  }

  /** Nothing more is handled (the session failed). */
  close(): void {
    this.closed = true;
    this.items.length = 0;
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.items.length > 0 && !this.closed) {
        const item = this.items.shift() as T;
        await this.on.handle(item);
        this.bytes -= waitingCost(item.bytes);
      }
    } catch (err) {
      this.on.error(err);
    } finally {
      this.running = false;
    }
    this.drainEnds();
  }

  private drainEnds(): void {
    if (this.running || this.items.length > 0) return;
    if (this.clientEnded && !this.clientEndDone) {
      this.clientEndDone = true;
      this.on.clientEnd();
    }
    if (this.serverEnded) this.on.serverEnd();
  }
}
