// Newline-delimited JSON-RPC framing on byte 0x0A only. Not readline: it also splits on a bare "\r", which is
// legal JSON whitespace inside a message. Each line is handed on with its original bytes, newline included.
// A line longer than the cap is never delivered in part: it is reported once and its bytes are discarded up to
// its newline. The pieces of a line that is still arriving are kept as they came, except small ones: a peer that
// writes a byte at a time would otherwise cost a buffer object per byte (hundreds of bytes each, gigabytes for a
// line under the cap); small pieces are copied together in runs of COALESCE bytes.

/** A piece shorter than this is copied into a run of small pieces instead of being kept on its own. */
const SMALL_PIECE = 4096;
/** A run of small pieces is made one buffer once it holds this many bytes (or before a large piece). */
const COALESCE = 16 * 1024;

export interface FramerEvents {
  line(bytes: Buffer): void;
  /** A line exceeded `maxLine` bytes; `seen` is how many bytes had arrived when it was cut off. */
  oversize(seen: number): void;
}

export class LineFramer {
  private parts: Buffer[] = [];
  /** Small pieces copied together, the first `accUsed` bytes (they follow `parts`). */
  private acc: Buffer | undefined;
  private accUsed = 0;
  private pending = 0;
  private discarding = false;

  constructor(
    private readonly maxLine: number,
    private readonly on: FramerEvents,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) {
        this.append(chunk.subarray(start));
        return;
      }
      const piece = chunk.subarray(start, nl + 1);
      start = nl + 1;
      if (this.discarding) {
        this.discarding = false;
        continue;
      }
      if (this.pending + piece.length > this.maxLine + 1) {
        this.reset();
        this.on.oversize(this.maxLine + 1);
        continue;
      }
      let line = piece;
      if (this.pending > 0) {
        this.flushSmall();
        this.parts.push(piece);
        line = Buffer.concat(this.parts, this.pending + piece.length); // the length given: no second pass
      }
      this.reset();
      this.on.line(line);
    }
  }

  /** Bytes after the last newline (a final line with no newline), if any. */
  rest(): Buffer | undefined {
    if (this.discarding || this.pending === 0) return undefined;
    this.flushSmall();
    const out = Buffer.concat(this.parts);
    this.reset();
    return out;
  }

  private append(bytes: Buffer): void {
    if (this.discarding || bytes.length === 0) return;
    if (this.pending + bytes.length > this.maxLine) {
      this.reset();
      this.discarding = true;
      this.on.oversize(this.maxLine + 1);
      return;
    }
    this.pending += bytes.length;
    if (bytes.length >= SMALL_PIECE) {
      this.flushSmall();
      this.parts.push(bytes);
      return;
    }
    for (let at = 0; at < bytes.length; ) {
      const acc = (this.acc ??= Buffer.allocUnsafeSlow(COALESCE));
      const n = bytes.copy(acc, this.accUsed, at);
      at += n;
      this.accUsed += n;
      if (this.accUsed === COALESCE) {
        this.parts.push(acc); // full: it is the line's now, and a new one is made for what follows
        this.acc = undefined;
        this.accUsed = 0;
      }
    }
  }

  /** The small pieces copied together so far, as a buffer of their own at the end of `parts`. */
  private flushSmall(): void {
    if (this.accUsed === 0) return;
    this.parts.push(Buffer.from((this.acc as Buffer).subarray(0, this.accUsed))); // a copy: the run is reused
    this.accUsed = 0;
  }

  /** How many buffers the line still arriving is kept in (the run of small pieces included). */
  get piecesHeld(): number {
    return this.parts.length + (this.accUsed > 0 ? 1 : 0);
  }

  private reset(): void {
    this.parts = [];
    this.accUsed = 0;
    this.pending = 0;
  }
}
