import type { Line } from '../protocol/line.js';
import { idText } from '../protocol/message.js';
import type { CallRules } from './call-rules.js';
import type { ServerChannel } from './channel.js';
import { cancellationForServer, shownName, type Refuser } from './client-refusals.js';
import type { ModernSession } from './modern-session.js';

// A notification of the client's, and what of it reaches the server: the client's own notifications/initialized
// is swallowed when the warden sent the server its own; a request method sent without an id is refused (it would
// reach the server ungated); a cancellation ends a call held for the user's answer, or a subscription, and
// reaches the server under the id the server knows; anything else under notifications/ is relayed as it came.

export interface NotificationContext {
  refuser: Refuser;
  rules: CallRules | undefined;
  modern: ModernSession;
  server: ServerChannel;
  /** True once (and forgets it) when the warden already sent the server `notifications/initialized`. */
  swallowInitialized(): boolean;
  toServer(bytes: Line): void;
}

export function relayClientNotification(ctx: NotificationContext, method: string, value: Map<string, unknown>, bytes: Buffer): void {
  if (method === 'notifications/initialized' && ctx.swallowInitialized()) return;
  if (!method.startsWith('notifications/')) {
    ctx.refuser.stats.refusedClientLines++;
    ctx.refuser.cfg.report(`refused a client notification named "${shownName(method)}": only notifications/* are relayed without an id; not forwarded`);
    return;
  }
  if (method === 'notifications/cancelled') {
    const params = value.get('params');
    const cancelled = params instanceof Map ? idText(params.get('requestId')) : undefined;
    if (cancelled !== undefined && ctx.rules?.cancelled(cancelled)) return; // a call that waits for the user
    if (cancelled !== undefined) ctx.modern.cancelled(cancelled);
    const out = cancellationForServer(value as Parameters<typeof cancellationForServer>[0], (clientId) => ctx.server.serverIdOf(clientId));
    if (out) ctx.toServer(out);
    return;
  }
  ctx.toServer(bytes);
}
