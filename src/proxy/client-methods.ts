// The requests a client may send through the warden, and what becomes of each one's answer: an enumerated
// table, so that a method nobody thought about is refused rather than relayed unjudged (DESIGN.md, "Admission
// by proof"). The classic column is revision 2025-11-25's client-to-server requests: before the handshake is
// released only `ping` is relayed and `initialize` gated; server/discover, a request of the other era, is
// answered by the warden itself with "method not found" and never relayed into a 2025 connection. The modern
// column is revision 2026-07-28's (the SDK v2 registry): no handshake, no ping, no logging/setLevel, no
// resources/subscribe nor tasks; server/discover judged like an initialize result, subscriptions/listen relayed
// (proxy/modern-session.ts).

export type MethodRule =
  /** The handshake: gated, its result judged before it is released. */
  | 'handshake'
  /** A listing page: judged against the lock, items that do not match removed (enforce). */
  | 'judged_page'
  /** tools/call: only a tool approved on this session, and the operator's rules. */
  | 'gated_call'
  /** prompts/get, resources/read: only an item the session admitted (surface/read-admission.ts). */
  | 'admitted_read'
  /** completion/complete: only for the item its `ref` names, when the session admitted it (proxy/completion.ts);
   *  before a handshake refused like any request. */
  | 'admitted_completion'
  /** Carries no surface: relayed, its answer passed on. */
  | 'pass'
  /** Answered by the warden, never relayed. */
  | 'warden_answers';

const TABLE: ReadonlyMap<string, MethodRule> = new Map<string, MethodRule>([
  ['initialize', 'handshake'],
  ['tools/list', 'judged_page'],
  ['prompts/list', 'judged_page'],
  ['resources/list', 'judged_page'],
  ['resources/templates/list', 'judged_page'],
  ['tools/call', 'gated_call'],
  ['prompts/get', 'admitted_read'],
  ['resources/read', 'admitted_read'],
  ['ping', 'pass'],
  ['completion/complete', 'admitted_completion'],
  ['logging/setLevel', 'pass'],
  ['resources/subscribe', 'pass'],
  ['resources/unsubscribe', 'pass'],
  ['tasks/get', 'pass'],
  ['tasks/result', 'pass'],
  ['tasks/list', 'pass'],
  ['tasks/cancel', 'pass'],
  ['server/discover', 'warden_answers'],
]);

/** Revision 2026-07-28's client requests. Any other is answered "method not found" by the warden, as the
 *  revision's servers answer it, and never relayed. */
const MODERN: ReadonlyMap<string, MethodRule | 'discover' | 'listen'> = new Map<string, MethodRule | 'discover' | 'listen'>([
  ['server/discover', 'discover'],
  ['subscriptions/listen', 'listen'],
  ['tools/list', 'judged_page'],
  ['prompts/list', 'judged_page'],
  ['resources/list', 'judged_page'],
  ['resources/templates/list', 'judged_page'],
  ['tools/call', 'gated_call'],
  ['prompts/get', 'admitted_read'],
  ['resources/read', 'admitted_read'],
  ['completion/complete', 'admitted_completion'],
]);

/** The rule for a client request's method on a modern connection; undefined: answered "method not found". */
export function modernRule(method: string): MethodRule | 'discover' | 'listen' | undefined {
  return MODERN.get(method);
}

/** The rule for a client request's method; undefined: not relayed. */
export function methodRule(method: string): MethodRule | undefined {
  return TABLE.get(method);
}

export type SessionState = 'new' | 'initializing' | 'open';
export type RefusedRequest = 'no_handshake' | 'during_handshake' | 'second_initialize' | 'unknown_method';

/** What the session does with a client request. */
export type RequestAction =
  | { do: 'forward' }
  | { do: 'gate_initialize' }
  | { do: 'admit_call' }
  | { do: 'admit_read' }
  | { do: 'answer_discover' }
  | { do: 'refuse'; why: RefusedRequest };

const refuse = (why: RefusedRequest): RequestAction => ({ do: 'refuse', why });

/**
 * The decision on a client request by its method and the session's state. `new`: no handshake yet (the
 * session's first request, or after the server refused initialize): ping is relayed, initialize gated, tools/call
 * and reads refused by their gates (no judge), the rest refused. `initializing`: the initialize result is held
 * and judged: only ping and listings (their answers are held, and judged once the judge exists) go ahead.
 * `open`: released: the table. Only initialize and its answer change the state.
 */
export function requestAction(method: string, state: SessionState): RequestAction {
  const rule = methodRule(method);
  if (rule === 'warden_answers') return { do: 'answer_discover' };
  if (method === 'ping') return { do: 'forward' };
  if (rule === 'handshake') return state === 'new' ? { do: 'gate_initialize' } : refuse(state === 'open' ? 'second_initialize' : 'during_handshake');
  if (state === 'initializing' && rule !== 'judged_page') return refuse('during_handshake');
  if (rule === 'gated_call') return { do: 'admit_call' };
  if (rule === 'admitted_read') return { do: 'admit_read' };
  if (state === 'new') return refuse('no_handshake');
  if (rule === 'admitted_completion') return { do: 'admit_read' };
  if (rule === undefined) return refuse('unknown_method');
  return { do: 'forward' };
}
