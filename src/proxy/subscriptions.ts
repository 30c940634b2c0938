import { printable } from '../escape.js';
import type { JsonObject, JsonValue } from '../protocol/json/reader.js';
import { errorResponse, idText } from '../protocol/message.js';
import type { ClientRequestMessage, ServerMessage } from './channel.js';
import { WARDEN_REFUSED } from './client-refusals.js';
import { SUBSCRIPTION_KEY, envelopeText } from './era.js';
import type { ModernHost } from './modern-session.js';
import { subscriptionNotification } from './response-shape.js';

// The subscriptions of a 2026-07-28 connection (modern-session.ts): subscriptions/listen is relayed under the
// client's own id (the server stamps it on the subscription's notifications); an acknowledgement or a list change
// reaches the client only for a subscription it opened, a list change only after the acknowledgement and for a
// list it asked for, and after the warden re-listed; each as the warden's own line (response-shape.ts
// subscriptionNotification), never the server's bytes.

/** Subscriptions a client may hold open at once. */
const MAX_SUBSCRIPTIONS = 64;

const LIST_CHANGES: ReadonlyMap<string, 'tools' | 'prompts' | 'resources'> = new Map([
  ['notifications/tools/list_changed', 'tools'],
  ['notifications/prompts/list_changed', 'prompts'],
  ['notifications/resources/list_changed', 'resources'],
] as const);
const ASKED: ReadonlyMap<string, 'tools' | 'prompts' | 'resources'> = new Map([
  ['toolsListChanged', 'tools'],
  ['promptsListChanged', 'prompts'],
  ['resourcesListChanged', 'resources'],
] as const);

interface Subscription {
  /** The client's id of its listen request (JSON text). */
  clientId: string;
  lists: Set<string>;
  /** The client's filter as it sent it (`notifications`). */
  asked: JsonValue | undefined;
  acked: boolean;
  envelope: string | undefined;
}

export class Subscriptions {
  /** Open subscriptions by the id the server stamps on their notifications (JSON text). */
  readonly open = new Map<string, Subscription>();

  constructor(private readonly host: ModernHost) {}

  /** subscriptions/listen: relayed under the client's id, and remembered until it ends. */
  async listen(msg: ClientRequestMessage, bytes: Buffer): Promise<void> {
    const h = this.host;
    if (this.open.size >= MAX_SUBSCRIPTIONS) {
      h.refuser.cfg.report(`refused a subscriptions/listen of the client: ${MAX_SUBSCRIPTIONS} subscriptions are open already; not forwarded`);
      h.toClient(errorResponse(msg.id, WARDEN_REFUSED, `mcp-warden refused subscriptions/listen: ${MAX_SUBSCRIPTIONS} subscriptions are open on this connection already; end one with notifications/cancelled first.`));
      return;
    }
    const params = msg.value.get('params') as JsonObject;
    const asked = params.get('notifications');
    const lists = new Set<string>();
    if (asked instanceof Map) for (const [k, v] of asked) if (v === true && ASKED.has(k)) lists.add(ASKED.get(k) as string);
    const request = await h.forward(msg, bytes, true);
    if (request) this.open.set(request.serverId, { clientId: msg.id, lists, asked, acked: false, envelope: envelopeText(msg.value) });
  }

  /** The client cancelled one of its requests (a subscription ends with it). */
  cancelled(clientId: string): void {
    for (const [stamp, sub] of this.open) if (sub.clientId === clientId) this.open.delete(stamp);
  }

  /** A notification of the server's, decided here (true) or by the session's common path (false): before the
   *  surface was judged every one is refused here; after, subscription acknowledgements and list changes are
   *  decided here, the rest there. */
  async onNotification(msg: ServerMessage, seq: number): Promise<boolean> {
    const h = this.host;
    const ack = msg.method === 'notifications/subscriptions/acknowledged';
    const list = LIST_CHANGES.get(msg.method);
    if (!h.surface.judge) {
      // Before anything was judged on this connection (a probe, or before the first judged request), nothing
      // the server says on its own reaches the client (no subscription is open before the judge either).
      h.reports.refused(ack || list ? 'unsubscribed' : 'not_in_era', `a ${printable(msg.method, 64)} notification before the surface was judged`);
      return true;
    }
    if (!ack && !list) return false;
    const stamp = subscriptionStamp(msg.value);
    const sub = stamp === undefined ? undefined : this.open.get(stamp);
    if (!sub || (ack ? sub.acked : !sub.acked || !sub.lists.has(list as string))) {
      const which = stamp === undefined ? 'without a subscription id' : `for subscription ${printable(stamp, 80)}, ${sub ? (ack ? 'acknowledged already' : sub.acked ? 'which did not ask for that list' : 'before its acknowledgement') : 'which the client did not open'}`;
      h.reports.refused('unsubscribed', `a ${msg.method} ${which}`);
      return true;
    }
    if (ack) sub.acked = true;
    else {
      h.server.style.envelope = sub.envelope;
      if (list !== 'tools') await h.surface.relistCatalogs(seq);
      else if (h.surface.listChangedNeedsListing(seq)) await h.surface.relist('relist');
      if (h.stopped()) return true;
    }
    const params = msg.value.get('params');
    h.toClient(subscriptionNotification(msg.method, sub.clientId, ack ? { server: params instanceof Map ? params.get('notifications') : undefined, asked: sub.asked } : undefined));
    return true;
  }
}

/** The subscription id a notification is stamped with, as JSON text. */
function subscriptionStamp(value: JsonObject): string | undefined {
  const params = value.get('params');
  const meta = params instanceof Map ? params.get('_meta') : undefined;
  return meta instanceof Map ? idText(meta.get(SUBSCRIPTION_KEY)) : undefined;
}
