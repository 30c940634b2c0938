import { printable } from '../escape.js';
import type { RefusedReason } from './channel.js';
import type { SessionConfig, SessionStats } from './session-config.js';

// What the server sent that is not forwarded, reported without letting the server flood the reports: the
// first few are reported (and, for refused answers, audited and so alerted) one by one, the rest counted (the
// exit event has the counts). A correct server never sends an answer no request waits for, so past a bound
// the session is closed.

/** Refused server messages audited one by one, and the count at which the session is closed. */
export const REFUSALS_REPORTED = 5;
export const REFUSALS_MAX = 100;
const NOISE_REPORTED = 5;

export class ServerReports {
  constructor(
    private readonly cfg: Pick<SessionConfig, 'serverId' | 'audit' | 'report'>,
    private readonly stats: SessionStats,
    private readonly close: (message: string) => void,
  ) {}

  /** An answer no request waits for, a late answer, or a batch. */
  refused(reason: RefusedReason, detail: string): void {
    const { serverId } = this.cfg;
    const n = ++this.stats.refusedServerMessages;
    if (n <= REFUSALS_REPORTED) {
      this.cfg.audit({ event: 'server_message_refused', server: serverId, reason });
      this.cfg.report(`server '${serverId}' sent ${detail}; not forwarded`);
    } else if (n === REFUSALS_REPORTED + 1) {
      this.cfg.report(`server '${serverId}' keeps sending messages no request waits for; further ones are counted, not reported one by one`);
    }
    if (n >= REFUSALS_MAX) this.close(`server '${serverId}' sent ${n} messages that answer no waiting request (the id in another form, unknown or repeated, or batches); the session was closed`);
  }

  /** A line on the server's stdout that is not a JSON-RPC message (log noise). */
  noise(bytes: Buffer, reason: string): void {
    if (++this.stats.nonJsonLines > NOISE_REPORTED) return;
    const preview = `"${printable(bytes.subarray(0, 80).toString('utf8'), 80)}"${bytes.length > 80 ? '…' : ''}`;
    this.cfg.report(`the server wrote a line to stdout that is not a JSON-RPC message (${reason}); not forwarded: ${preview}`);
  }
}
