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
