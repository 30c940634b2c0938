import { printable } from '../escape.js';
import { words, type OwnWords } from '../own-words.js';
import type { RefusedReason } from './channel.js';
import type { SessionConfig, SessionStats } from './session-config.js';
import type { Dropped } from './response-shape.js';

// What the server sent that is not forwarded, reported without letting the server flood the reports: the
// first few are reported (and, for refused answers, audited and so alerted) one by one, the rest counted (the
// exit event has the counts). A correct server never sends an answer no request waits for, so past a bound
// the session is closed.

/** Refused server messages audited one by one, and the count at which the session is closed. */
export const REFUSALS_REPORTED = 5;
export const REFUSALS_MAX = 100;
const NOISE_REPORTED = 5;
/** Inadmissible pages of the client's listings audited (and so alerted) one by one in a session. */
export const PAGES_RECORDED = 5;

export class ServerReports {
  constructor(
    private readonly cfg: Pick<SessionConfig, 'serverId' | 'audit' | 'report'>,
    private readonly stats: SessionStats,
    private readonly close: (message: string, said: OwnWords) => void,
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
    if (n >= REFUSALS_MAX) this.close(`server '${serverId}' sent ${n} messages that answer no waiting request (the id in another form, unknown or repeated, or batches); the session was closed`, words`it sent ${n} messages that answer no waiting request (the id in another form, unknown or repeated, or batches)`);
  }

  /** A page of one of the client's listings (tools/list, prompts/list, resources/list, resources/templates/list)
   *  that cannot be admitted (answered to the client with the refusal). A server can make every page so and
   *  notify list changes to make the client list again: past the cap, one reports_capped event, and the rest are
   *  counted (the exit event's refusedPages). */
  pageRefused(reason: string, method = 'tools/list'): void {
    const { serverId } = this.cfg;
    const n = ++this.stats.refusedPages;
    if (n <= PAGES_RECORDED) {
      this.cfg.audit({ event: 'surface_inadmissible', server: serverId, reason });
      this.cfg.report(`refused a ${method} page of server '${serverId}': ${reason}`);
    } else if (n === PAGES_RECORDED + 1) {
      this.cfg.audit({ event: 'reports_capped', server: serverId, report: 'surface_inadmissible', cap: PAGES_RECORDED });
      this.cfg.report(`server '${serverId}' keeps serving listing pages that cannot be admitted; each is refused to the client, and past ${PAGES_RECORDED} in a session they are counted, not recorded one by one. Review with: mcp-warden diff ${serverId}`);
    }
  }

  private readonly droppedReported = new Set<string>();

  /** Members of an answer nothing judged, dropped from it (response-shape.ts): reported once per method. */
  membersDropped(method: string, dropped: Dropped): void {
    if (this.droppedReported.has(method) || this.droppedReported.size >= 16) return;
    this.droppedReported.add(method);
    const names = (list: string[]): string => list.slice(0, 8).map((k) => printable(k, 32)).join(', ') + (list.length > 8 ? ` and ${list.length - 8} more` : '');
    const parts = [...(dropped.envelope.length ? [`beside its result: ${names(dropped.envelope)}`] : []), ...(dropped.result.length ? [`in its result: ${names(dropped.result)}`] : [])];
    this.cfg.report(`server '${this.cfg.serverId}': its ${printable(method, 64)} answer carried members the lock does not judge (${parts.join('; ')}); not relayed`);
  }

  /** A line on the server's stdout that is not a JSON-RPC message (log noise). */
  noise(bytes: Buffer, reason: string): void {
    if (++this.stats.nonJsonLines > NOISE_REPORTED) return;
    const preview = `"${printable(bytes.subarray(0, 80).toString('utf8'), 80)}"${bytes.length > 80 ? '…' : ''}`;
    this.cfg.report(`the server wrote a line to stdout that is not a JSON-RPC message (${reason}); not forwarded: ${preview}`);
  }
}
