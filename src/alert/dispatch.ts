import type { AuditEvent } from '../audit/events.js';
import { isAlert, type AlertEvent } from './event.js';
import { makeSink, type SinkConfig } from './sinks.js';

// Sends alert-worthy events to every configured sink without waiting: the relay never blocks on an alert.
// A sink that fails is reported (stderr, and an `alert_failed` audit event through `onFailure`), never fatal.
// Each sink runs a bounded number of sends at once (an exec hook is a process, a webhook a request): the rest
// wait, up to a bound, and past it are dropped and counted, the count reported through `onFailure` once the
// sink is idle again (or at `drain`), never silently. `drain` waits, bounded, for alerts still in flight or
// waiting before the process exits.

/** Sends one sink runs at once. */
export const SENDS_AT_ONCE = 4;
/** Alerts one sink holds while its sends run; past it, alerts are dropped and counted. */
export const SENDS_WAITING = 64;

interface SinkState {
  name: string;
  send: (e: AlertEvent) => Promise<void>;
  running: number;
  waiting: AlertEvent[];
  dropped: number;
}

export class Alerter {
  private readonly sinks: SinkState[];
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    configs: SinkConfig[],
    private readonly onFailure: (sink: string, reason: string) => void,
    note: (m: string) => void,
  ) {
    this.sinks = configs.map((c) => ({ ...makeSink(c, note), running: 0, waiting: [], dropped: 0 }));
  }

  /** Sends `e` to every sink if it is an alert. */
  consider(e: AuditEvent): void {
    if (!isAlert(e)) return;
    const alert = { ts: new Date().toISOString(), ...e } as AlertEvent;
    for (const sink of this.sinks) {
      if (sink.running < SENDS_AT_ONCE) this.start(sink, alert);
      else if (sink.waiting.length < SENDS_WAITING) sink.waiting.push(alert);
      else sink.dropped++;
    }
  }

  async drain(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.inFlight.size > 0 && Date.now() < deadline) {
      await Promise.race([Promise.all(this.inFlight), new Promise((r) => setTimeout(r, deadline - Date.now()).unref())]);
    }
    for (const sink of this.sinks) {
      const unsent = sink.waiting.length;
      sink.waiting.length = 0;
      if (unsent > 0) this.onFailure(sink.name, `${unsent} alert(s) not sent: they were still waiting for the sink when the warden exited`);
      this.reportDropped(sink);
    }
  }

  private start(sink: SinkState, alert: AlertEvent): void {
    sink.running++;
    const p = sink.send(alert)
      .catch((err: Error) => this.onFailure(sink.name, err.message))
      .finally(() => {
        sink.running--;
        this.inFlight.delete(p);
        const next = sink.waiting.shift();
        if (next) this.start(sink, next);
        else if (sink.running === 0) this.reportDropped(sink);
      });
    this.inFlight.add(p);
  }

  private reportDropped(sink: SinkState): void {
    if (sink.dropped === 0) return;
    const n = sink.dropped;
    sink.dropped = 0;
    this.onFailure(sink.name, `${n} alert(s) dropped: ${SENDS_AT_ONCE} sends were running and ${SENDS_WAITING} alerts waiting`);
  }
}
