import type { Readable, Writable } from 'node:stream';
import { LineFramer } from '../protocol/framing.js';
import { classify, errorResponse } from '../protocol/message.js';

// A refused launch still owes the client an answer: its initialize (or whatever request it sent first) gets a
// JSON-RPC error that says what was refused and which command shows more, so the refusal is visible in the
// client rather than a silent hang.

export const REFUSED_CODE = -32001;

/** Answers the first request from the client with the refusal; resolves once written, or at client EOF. */
export function answerRefusal(clientIn: Readable, clientOut: Writable, message: string, data: unknown): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clientIn.pause();
      resolve();
    };
    const framer = new LineFramer(1024 * 1024, {
      line: (bytes) => {
        if (done) return;
        const msg = classify(bytes, { maxBytes: 1024 * 1024, maxDepth: 64 });
        if (msg.kind !== 'request') return;
        clientOut.write(errorResponse(msg.id, REFUSED_CODE, message, data), () => finish());
      },
      oversize: () => {},
    });
    clientIn.on('data', (chunk: Buffer) => framer.push(chunk));
    clientIn.on('end', finish);
    clientIn.on('error', finish);
  });
}

/** A session that ended before the relay read any line of the client's still owes its first request an answer:
 *  the session's own framer hands each later line to `line`, and the first request gets `answer(id)` (the same
 *  error the session's end gave the requests it had read). `done` resolves once that is written, or at client
 *  EOF (a client that never sends is waited for, as answerRefusal waits). */
export class OwedFirstAnswer {
  readonly done: Promise<void>;
  private settle!: () => void;
  private answered = false;

  constructor(
    private readonly clientIn: Readable,
    private readonly clientOut: Writable,
    private readonly answer: (id: string) => Buffer,
    private readonly limits: Parameters<typeof classify>[1],
  ) {
    this.done = new Promise((resolve) => (this.settle = resolve));
    if (clientIn.readableEnded || clientOut.destroyed || clientOut.writableEnded) this.end();
  }

  line(bytes: Buffer): void {
    if (this.answered) return;
    const msg = classify(bytes, this.limits);
    if (msg.kind !== 'request') return;
    this.answered = true;
    if (this.clientOut.destroyed || this.clientOut.writableEnded) return this.end();
    this.clientOut.write(this.answer(msg.id), () => this.end());
  }

  /** The client's stdin ended or failed (or the answer was written): nothing more is read. */
  end(): void {
    this.answered = true;
    this.clientIn.pause();
    this.settle();
  }
}
