// A line on its way out: one buffer, or pieces that are written one after the other. A long line whose id
// the relay replaces leaves as three pieces (the bytes before the id, the new id, the bytes after it) instead of
// a copy of the whole line (docs/adr/0026-bulk-relay.md). Either way the bytes that reach the peer are the same.

export type Line = Buffer | readonly Buffer[];

/** The number of bytes in a line. */
export function lineLength(line: Line): number {
  if (Buffer.isBuffer(line)) return line.length;
  let n = 0;
  for (const piece of line) n += piece.length;
  return n;
}

/** The line as one buffer (a copy only when it is in pieces). */
export function joinLine(line: Line): Buffer {
  return Buffer.isBuffer(line) ? line : Buffer.concat(line as Buffer[]);
}

/** What writeLine needs of a stream (a Writable). */
export interface LineSink {
  write(chunk: Buffer): boolean;
  cork(): void;
  uncork(): void;
}

/** Writes a line; its pieces are corked together, so that a stream with writev sends them in one call.
 *  Returns what the stream's last write() returned (false: wait for 'drain'). */
export function writeLine(out: LineSink, line: Line): boolean {
  if (Buffer.isBuffer(line)) return out.write(line);
  out.cork();
  let ok = true;
  for (const piece of line) ok = out.write(piece);
  out.uncork();
  return ok;
}
