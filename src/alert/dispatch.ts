import type { AuditEvent } from '../audit/events.js';
import { isAlert, type AlertEvent } from './event.js';
import { makeSink, type SinkConfig } from './sinks.js';

// Sends alert-worthy events to every configured sink without waiting: the relay never blocks on an alert.
// A sink that fails is reported (stderr, and an `alert_failed` audit event through `onFailure`), never fatal.
// `drain` waits, bounded, for alerts still in flight before the process exits.

export class Alerter {
  private readonly sinks: { name: string; send: (e: AlertEvent) => Promise<void> }[];
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    configs: SinkConfig[],
    private readonly onFailure: (sink: string, reason: string) => void,
    note: (m: string) => void,
  ) {
    this.sinks = configs.map((c) => makeSink(c, note));
  }

  /** Sends `e` to every sink if it is an alert. */
  consider(e: AuditEvent): void {
    if (!isAlert(e)) return;
    const alert = { ts: new Date().toISOString(), ...e } as AlertEvent;
    for (const sink of this.sinks) {
      const p = sink.send(alert).catch((err: Error) => this.onFailure(sink.name, err.message));
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
    }
  }

  async drain(ms: number): Promise<void> {
    if (this.inFlight.size === 0) return;
    await Promise.race([Promise.all(this.inFlight), new Promise((r) => setTimeout(r, ms).unref())]);
  }
}
