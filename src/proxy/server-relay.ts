import { printable } from '../escape.js';
import { joinLine, type Line } from '../protocol/line.js';
import { errorResponse } from '../protocol/message.js';
import { completionImpersonation, errorImpersonation, questionImpersonation, type Impersonation } from './ask.js';
import type { CallRules } from './call-rules.js';
import type { ClientRequest, ResponseMessage, ServerMessage } from './channel.js';
import { catalogOf, type ClientCatalogPages } from './client-catalog.js';
import { judgeClientPage } from './client-listing.js';
import { methodRule } from './client-methods.js';
import { refuseUnjudgedListing, shownName, WARDEN_REFUSED, type Refuser } from './client-refusals.js';
import type { EarlyPings } from './early-pings.js';
import type { ModernSession } from './modern-session.js';
import { malformedRefused, unjudgedError } from './refusal-text.js';
import { malformedAnswer, modernPageKeys, shapedBytes, shapedResponse } from './response-shape.js';
import type { ServerReports } from './server-reports.js';
import type { SessionConfig } from './session-config.js';
import type { SurfaceGate } from './surface-gate.js';

// What of the server's reaches the client once nothing holds it (session.ts): the answer to a waiting client
// request, shaped to its method's members and, for a listing page, judged in-band; and a message of the server's
// own (a ping, an elicitation request, a list change), each through its gate.

/** What the server relay needs of the session it is part of. */
export interface RelayHost {
  cfg: SessionConfig;
  refuser: Refuser;
  rules: CallRules | undefined;
  surface: SurfaceGate;
  modern: ModernSession;
  reports: ServerReports;
  catalogPages: ClientCatalogPages;
  pings: EarlyPings;
  /** True once the initialize result was judged and released to the client. */
  released(): boolean;
  stopped(): boolean;
  toClient(bytes: Line): void;
  toServer(bytes: Line): void;
}

/** The answer to one waiting client request (its id already the client's own). */
export async function relayServerAnswer(host: RelayHost, request: ClientRequest, msg: ResponseMessage, bytes: Line): Promise<void> {
  if (!(await host.surface.passedBeforeFirstByte())) return;
  if (host.modern.active && (await host.modern.onAnswer(request, msg, bytes))) return;
  if (msg.value.has('error') && refusedImpersonation(host, request, errorImpersonation(msg.value.get('error')))) return;
  if (!host.released() && msg.value.has('error')) {
    host.toClient(unjudgedError(host.cfg, request.clientId, request.method, msg.value));
    return;
  }
  if (request.method === 'server/discover') {
    // A probe's answer that comes after the connection fell back to 2025: nothing judges it here.
    host.reports.refused('not_in_era', 'a server/discover answer after the connection continued as 2025');
    host.toClient(errorResponse(request.clientId, -32601, 'mcp-warden: server/discover is not part of this session, which continued as revision 2025'));
    return;
  }
  const malformed = malformedAnswer(msg.value, request.method, false);
  if (malformed === 'result' || malformed === 'completion') {
    host.reports.refused('malformed_result', `a ${printable(request.method, 64)} answer whose ${malformed === 'result' ? 'result is not a JSON object' : 'completion is not the revision\'s shape'}`);
    host.toClient(malformedRefused(request.clientId, host.cfg.serverId, malformed));
    return;
  }
  if (request.method === 'completion/complete' && !msg.value.has('error') && refusedImpersonation(host, request, completionImpersonation(msg.value.get('result')), 'completion')) return;
  const rule = methodRule(request.method);
  const judge = host.surface.judge;
  const catalog = catalogOf(request.method);
  const own = rule !== 'judged_page' ? undefined : catalog ? [catalog.key, 'nextCursor'] : ['tools', 'nextCursor'];
  const pageKeys = own && host.modern.active ? modernPageKeys(own) : own;
  const shaped = shapedResponse(msg.value, request.method, pageKeys);
  if (shaped.dropped.envelope.length + shaped.dropped.result.length > 0) host.reports.membersDropped(request.method, shaped.dropped);
  const out = shapedBytes(shaped, request.clientId, bytes);
  if (rule !== 'judged_page') host.toClient(out); // a request admitted before it was relayed
  else if (!judge) refuseUnjudgedListing(host.refuser, request.clientId, request.method);
  else if (!catalog) host.toClient(judgeClientPage(judge, shaped.value, request, joinLine(out), { ...host.cfg, pageRefused: (reason) => host.reports.pageRefused(reason) }, host.rules));
  else host.toClient(host.catalogPages.judge(judge, catalog, shaped.value, request, joinLine(out)));
}

/** An error answer worded as the warden's (a -32042 URL elicitation, any message or data a client shows), or a
 *  completion whose values are (a client shows them in its picker: review 28), or either too large to read:
 *  answered with the warden's refusal in its place, reported as impersonation. */
function refusedImpersonation(host: RelayHost, request: ClientRequest, found: Impersonation | undefined, of: 'error' | 'completion' = 'error'): boolean {
  if (!found) return false;
  const [what, is, holds] = of === 'error' ? ['its error', 'is', 'holds'] : ['its completion values', 'are', 'hold'];
  const why =
    found === 'worded' ? `${what} ${is} worded as a message of mcp-warden, which only the warden may write`
    : found === 'markup' ? `${what} ${holds} an elicitation with HTML (a tag, comment, declaration, CDATA or processing instruction: "<" then a letter, "/", "!" or "?"), which a client may hide or show as it likes; a question is plain text or Markdown`
    : found === 'bidi' ? `${what} ${holds} a bidi control (U+202A-U+202E, U+2066-U+2069), which a client may show as text reversed, so the warden cannot tell what it reads as`
    : `${what} ${holds} more strings, or deeper, or more to read as Markdown, than the warden reads to tell whether it is worded as a message of mcp-warden`;
  host.reports.refused('impersonation', `${of === 'error' ? 'an error answer' : 'a completion answer'} to ${printable(request.method, 64)}: ${why}`);
  host.toClient(errorResponse(request.clientId, WARDEN_REFUSED, `mcp-warden refused the answer of server '${host.cfg.serverId}' to ${shownName(request.method)}: ${why}. Run 'mcp-warden audit' for details.`));
  return true;
}

/** A message of the server's own (a request or a notification). */
export async function relayServerMessage(host: RelayHost, msg: ServerMessage, bytes: Buffer, seq: number): Promise<void> {
  if (!(await host.surface.passedBeforeFirstByte())) return;
  if (host.modern.active && (await host.modern.onMessage(msg, seq))) return;
  // A ping read while a probe was open and relayed after the connection fell back to 2025: bare, under an id of
  // the warden's, like every other (early-pings.ts).
  if (msg.kind === 'request' && msg.method === 'ping') return void host.toClient(host.pings.relay(msg.id));
  const impersonation = msg.kind === 'request' && msg.method === 'elicitation/create' ? questionImpersonation(msg.value.get('params')) : undefined;
  if (msg.kind === 'request' && impersonation) {
    const why =
      impersonation === 'worded' ? 'its message is worded as a question of mcp-warden'
      : impersonation === 'markup' ? 'it holds HTML (a tag, comment, declaration, CDATA or processing instruction: "<" then a letter, "/", "!" or "?"), which a client may hide or show as it likes; a question is plain text or Markdown'
      : impersonation === 'bidi' ? 'it holds a bidi control (U+202A-U+202E, U+2066-U+2069), which a client may show as text reversed'
      : 'it holds more strings, longer or deeper, than the warden reads to tell whether it is worded as a question of mcp-warden';
    host.reports.refused('impersonation', `an elicitation request: ${why}`);
    host.toServer(errorResponse(msg.id, WARDEN_REFUSED, `mcp-warden refused this elicitation request: ${why}`));
    return;
  }
  if (msg.kind === 'notification' && msg.method === 'notifications/tools/list_changed' && host.surface.listChangedNeedsListing(seq)) {
    await host.surface.relist('relist');
    if (host.stopped()) return;
  }
  host.toClient(bytes);
}
