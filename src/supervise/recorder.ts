import fs from 'node:fs';
import net from 'node:net';
import { Alerter } from '../alert/dispatch.js';
import type { SinkConfig } from '../alert/sinks.js';
import type { AuditEvent } from '../audit/events.js';
import { appendAudit } from '../audit/log.js';
import type { HomePaths } from '../store/paths.js';

// What a verb does with an event: append it to the audit log, and send it to the alert sinks when it is an
// alert. Writes are serialized in order; nothing waits on a sink.

export interface Recorder {
  record(e: AuditEvent): void;
  /** Waits for audit writes, and (bounded) for alerts in flight. */
  flush(): Promise<void>;
}

/** A best-effort line to the daemon: never awaited by the session, dropped when no daemon listens. */
function daemonLink(paths: HomePaths): { send: (e: AuditEvent) => void; close: () => Promise<void> } {
  const sock = paths.eventSocket;
  if (!fs.existsSync(sock)) return { send: () => {}, close: async () => {} };
  const conn = net.connect(sock);
  conn.on('error', () => conn.destroy());
  // Who is speaking: when this connection drops, the daemon waits for this pid to be gone, then sweeps.
  conn.write(JSON.stringify({ hello: { pid: process.pid } }) + '\n');
  let closing: Promise<void> | undefined;
  return {
    send: (e) => {
      if (!conn.destroyed) conn.write(JSON.stringify(e) + '\n');
    },
    close: () =>
      (closing ??= new Promise((resolve) => {
        if (conn.destroyed) return resolve();
        const t = setTimeout(() => (conn.destroy(), resolve()), 200);
        conn.end(() => (clearTimeout(t), resolve()));
      })),
  };
}

export function recorder(paths: HomePaths, sinks: SinkConfig[], say: (m: string) => void, toDaemon = true): Recorder {
  const link = toDaemon ? daemonLink(paths) : { send: () => {}, close: async () => {} };
  let chain: Promise<unknown> = Promise.resolve();
  const write = (e: AuditEvent): void => {
    chain = chain.then(() => appendAudit(paths.audit, e)).catch((err: Error) => say(`could not write the audit log: ${err.message}`));
  };
  const alerter = new Alerter(
    sinks,
    (sink, reason) => {
      say(`alert sink ${sink} failed: ${reason}`);
      write({ event: 'alert_failed', sink, reason });
    },
    say,
  );
  return {
    record(e) {
      write(e);
      alerter.consider(e);
      link.send(e);
    },
    async flush() {
      await alerter.drain(5000);
      await chain;
      await link.close();
    },
  };
}
