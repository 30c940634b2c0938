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

export function recorder(paths: HomePaths, sinks: SinkConfig[], say: (m: string) => void): Recorder {
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
    },
    async flush() {
      await alerter.drain(5000);
      await chain;
    },
  };
}
