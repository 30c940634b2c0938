// Newline-delimited JSON-RPC framing on byte 0x0A only. Not readline: it also splits on a bare "\r", which is
// legal JSON whitespace inside a message. Each line is handed on with its original bytes, newline included.
// A line longer than the cap is never delivered in part: it is reported once and its bytes are discarded up to
// its newline.

export interface FramerEvents {
  line(bytes: Buffer): void;
  /** A line exceeded `maxLine` bytes; `seen` is how many bytes had arrived when it was cut off. */
  oversize(seen: number): void;
}

export class LineFramer {
  private parts: Buffer[] = [];
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
    this.parts.push(bytes);
    this.pending += bytes.length;
  }

  private reset(): void {
    this.parts = [];
    this.pending = 0;
  }
}
