import type { AuditEvent } from '../audit/events.js';
import { escaped } from '../escape.js';

// Which audit events are alerts: every refusal, drift, widening block, failed canary, rejected or applied trust bundle. An alert carries the
// audit event itself (server id, event name, names, field names, digests): audit events never hold
// descriptions, schema bodies or annotation values, so neither do alerts.

export type AlertEvent = AuditEvent & { ts: string };

export function isAlert(e: AuditEvent): boolean {
  switch (e.event) {
    case 'launch':
      return e.decision === 'refuse';
    case 'surface':
      return e.pinState === 'changed' && (e.source === 'handshake' || e.source === 'relist' || e.source === 'client_list' || e.source === 'verify');
    case 'canary':
      return e.result === 'fail';
    case 'rules_changed':
      return e.via === 'outside_cli';
    case 'tier_widening_blocked':
    case 'call_refused':
    case 'read_refused':
    case 'surface_inadmissible':
    case 'reports_capped':
    case 'server_message_refused':
    case 'catalog_drift':
    case 'binary_changed':
    case 'config_invalid':
    case 'verify_failed':
    case 'module_refused':
    case 'guard_report_overflow':
    case 'sandbox_denied':
    case 'sandbox_deny_replaced':
    case 'sandbox_writes_unobserved':
    case 'bundle_rejected':
    case 'bundle_applied':
      return true;
    default:
      return false;
  }
}

/** A fact's value: one plain word as it is, anything else between double quotes with `"` and `\\` escaped (a
 *  space in a name could otherwise add a forged `key=value`); hidden code points through the one escaper either
 *  way (a newline could forge a second alert line). */
function value(v: unknown): string {
  const text = String(v);
  return /^[^\s"=\\]+$/u.test(text) ? escaped(text) : `"${escaped(text.replace(/["\\]/g, (c) => `\\${c}`))}"`;
}

/** One line a human reads on a terminal or in a client's MCP log. */
export function oneLine(e: AlertEvent): string {
  const facts = Object.entries(e)
    .filter(([k, v]) => !['ts', 'event', 'server', 'prev'].includes(k) && (typeof v !== 'object' || v === null))
    .map(([k, v]) => `${k}=${value(v)}`)
    .join(' ');
  return `mcp-warden ALERT ${e.event}${'server' in e ? ` server=${value(e.server)}` : ''}${facts ? ` ${facts}` : ''}`;
}
