import { RawSession, answerTo, modernLine, type Sdk2Home } from '../attack27/helpers.js';

// The set-up the tests of a server's own `input_required` answer share (test/attack27/forged-input-required,
// test/attack43/input-required-fold): the 'forge' home of attack27's modern-hostile server (hostileHome), whose
// tool `confirm` answers with the scenario's `inputRequired`, asked on a raw 2026-07-28 session.

/** An elicitation request of form mode with this message, as a server puts it in `inputRequests`. */
export const elicit = (message: string): Record<string, unknown> => ({
  method: 'elicitation/create',
  params: { mode: 'form', message, requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } },
});

/** On session `s` of the 'forge' home: lists the tools, calls `confirm` and, with `retryWith`, calls it again
 *  with an accepted answer and the request state `retryWith` makes of the first answer's. The answers. */
export async function callConfirm(s: RawSession, retryWith?: (state: string) => string): Promise<{ first: Record<string, unknown>; second?: Record<string, unknown> }> {
  s.send(modernLine(1, 'tools/list'));
  await answerTo(s, 1);
  s.send(modernLine(2, 'tools/call', { name: 'confirm', arguments: {} }));
  const first = await answerTo(s, 2);
  if (!retryWith) return { first };
  const state = (first.result as { requestState: string }).requestState;
  s.send(modernLine(3, 'tools/call', { name: 'confirm', arguments: {}, inputResponses: { ok: { action: 'accept', content: { ok: true } } }, requestState: retryWith(state) }));
  return { first, second: await answerTo(s, 3) };
}

/** A raw session of the 'forge' server of home `h`. */
export const forgeSession = (h: Sdk2Home): RawSession => new RawSession(h.home, 'forge');
