import fs from 'node:fs';
import net from 'node:net';
import { LineFramer } from '../protocol/framing.js';

// The local socket on which `run` processes tell the daemon what happened in their sessions (launches,
// refusals, drift, canaries). Owner-only (the home is 0700 and the socket 0600); bounded lines; the daemon
// never answers, and a `run` never waits for it.

const MAX_LINE = 64 * 1024;

/** `onClose` runs when a sender goes away (a `run` that ended, or died: the daemon sweeps orphans then), with
 *  the pid the sender said it has in its first line (`{"hello":{"pid":N}}`), if it said one. */
export function listenForEvents(socketPath: string, onEvent: (e: Record<string, unknown>) => void, onClose: (pid: number | undefined) => void = () => {}): Promise<net.Server> {
  fs.rmSync(socketPath, { force: true });
  const server = net.createServer((conn) => {
    let pid: number | undefined;
    const framer = new LineFramer(MAX_LINE, {
      line: (bytes) => {
        try {
          const e = JSON.parse(bytes.toString('utf8')) as unknown;
          if (!e || typeof e !== 'object' || Array.isArray(e)) return;
          const hello = (e as { hello?: { pid?: unknown } }).hello;
          if (hello) pid = Number.isInteger(hello.pid) && (hello.pid as number) > 1 ? (hello.pid as number) : undefined;
          else onEvent(e as Record<string, unknown>);
        } catch {
          // not an event: ignored (the sender is a `run` of the same user; nothing to answer)
        }
      },
      oversize: () => conn.destroy(),
    });
    conn.on('data', (d: Buffer) => framer.push(d));
    conn.on('error', () => {});
    conn.on('close', () => onClose(pid));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      fs.chmodSync(socketPath, 0o600);
      resolve(server);
    });
  });
}
