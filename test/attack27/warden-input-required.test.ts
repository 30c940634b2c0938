import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeRules } from '../helpers/rules.js';
import { auditEvents } from '../helpers/warden.js';
import { RawSession, answerTo, envelope, hostileHome, modernLine, type Sdk2Home } from './helpers.js';

// Issue 27 item 4: `ask` for a modern client. A 2026-07-28 stdio server must not write requests to stdout and
// SDK v2 clients drop server-to-client requests on a modern connection, so the warden answers the held call
// with its own `input_required` result; its `requestState` is bound to that exact call, integrity-protected
// with a key of the session, never forwarded to the server, and refused when replayed or altered. The retried
// call is judged again before it is forwarded, as the client first sent it.

let h: Sdk2Home;
beforeEach(() => {
  h = hostileHome('ask27');
  writeRules(h.home, 'ask27', { tools: { echo: { kind: 'destructive' } } }); // destructive: ask, by default
});
afterEach(() => h.cleanup());

type InputRequired = { resultType: string; inputRequests: Record<string, { method: string; params: Record<string, unknown> }>; requestState: string };

/** A modern session with the tools listed and a call of echo answered by the warden's question. */
async function asked(): Promise<{ s: RawSession; question: InputRequired }> {
  const s = new RawSession(h.home, 'ask27');
  s.send(modernLine(1, 'tools/list'));
  await answerTo(s, 1);
  s.send(modernLine(2, 'tools/call', { name: 'echo', arguments: { text: 'held' } }));
  const answer = await answerTo(s, 2);
  return { s, question: answer.result as InputRequired };
}

const retry = (s: RawSession, id: number, question: InputRequired, state: string, args: Record<string, unknown> = { text: 'held' }, action = 'accept'): void => {
  const key = Object.keys(question.inputRequests)[0] as string;
  s.send(modernLine(id, 'tools/call', { name: 'echo', arguments: args, inputResponses: { [key]: { action } }, requestState: state }));
};

const calls = (tool: string): Record<string, unknown>[] => h.received().filter((m) => m.method === 'tools/call' && (m.params as { name?: string }).name === tool).map((m) => m.params as Record<string, unknown>);
const echoCalls = (): Record<string, unknown>[] => h.received().filter((m) => m.method === 'tools/call' && (m.params as { name?: string }).name === 'echo').map((m) => m.params as Record<string, unknown>);
const refusedMessage = (a: Record<string, unknown>): string => (a.error as { message: string } | undefined)?.message ?? `not refused: ${JSON.stringify(a)}`;

describe("the warden's own input_required for a held call", () => {
  it('asks with an elicitation of its own and a requestState; the server receives nothing until the retry', async () => {
    const { s, question } = await asked();
    try {
      expect(question.resultType).toBe('input_required');
      const requests = Object.values(question.inputRequests);
      expect(requests).toHaveLength(1);
      expect(requests[0]?.method).toBe('elicitation/create');
      expect(JSON.stringify(requests[0]?.params)).toMatch(/mcp-warden/);
      expect(typeof question.requestState).toBe('string');
      expect(echoCalls()).toEqual([]);
    } finally {
      s.close();
      await s.exited;
    }
  });

  it('the accepted retry is forwarded once, as the client first sent it: no requestState, no inputResponses', async () => {
    const { s, question } = await asked();
    try {
      retry(s, 3, question, question.requestState);
      expect((await answerTo(s, 3)).result).toMatchObject({ content: [{ type: 'text', text: 'echo: held' }] });
    } finally {
      s.close();
      await s.exited;
    }
    const calls = echoCalls();
    expect(calls).toHaveLength(1);
    expect(calls[0]).not.toHaveProperty('requestState');
    expect(calls[0]).not.toHaveProperty('inputResponses');
    expect(calls[0]?.arguments).toEqual({ text: 'held' });
    expect(s.stdoutBytes.toString().match(/"requestState"/g)).toHaveLength(1); // only in the question itself
    expect(auditEvents(h.home).filter((e) => e.event === 'call_asked')).toMatchObject([{ server: 'ask27', tool: 'echo', kind: 'destructive', arguments: ['text'], answer: 'accept' }]);
  });

  it.each([
    ['altered', (state: string) => state.slice(0, -1) + (state.endsWith('A') ? 'B' : 'A'), { text: 'held' }],
    ['made up', () => 'mcp-warden-ask-00000000000000000000000000000000', { text: 'held' }],
    ['moved to another call (other arguments)', (state: string) => state, { text: 'rm -rf ~' }],
  ])('a requestState %s is refused, and the server never receives the call', async (_what, forge, args) => {
    const { s, question } = await asked();
    try {
      retry(s, 3, question, forge(question.requestState), args);
      expect(refusedMessage(await answerTo(s, 3))).toMatch(/mcp-warden refused/);
    } finally {
      s.close();
      await s.exited;
    }
    expect(echoCalls()).toEqual([]);
  });

  it.each([
    ['another tool', { name: 'poke', arguments: { text: 'held' } }],
    ['the same call with another params member', { name: 'echo', arguments: { text: 'held' }, task: { ttl: 60000 } }],
  ])('a requestState moved to %s is refused, and the server receives neither call', async (_what, call) => {
    const { s, question } = await asked();
    try {
      const key = Object.keys(question.inputRequests)[0] as string;
      s.send(modernLine(3, 'tools/call', { ...call, inputResponses: { [key]: { action: 'accept' } }, requestState: question.requestState }));
      expect(refusedMessage(await answerTo(s, 3))).toMatch(/mcp-warden refused/);
    } finally {
      s.close();
      await s.exited;
    }
    expect([...calls('echo'), ...calls('poke')]).toEqual([]);
  });

  it('a requestState replayed after its call went through is refused: the server receives the call once', async () => {
    const { s, question } = await asked();
    try {
      retry(s, 3, question, question.requestState);
      expect((await answerTo(s, 3)).result).toMatchObject({ content: [{ type: 'text', text: 'echo: held' }] });
      retry(s, 4, question, question.requestState);
      expect(refusedMessage(await answerTo(s, 4))).toMatch(/mcp-warden refused/);
    } finally {
      s.close();
      await s.exited;
    }
    expect(echoCalls()).toHaveLength(1);
    expect(auditEvents(h.home).filter((e) => e.event === 'client_message_refused')).toMatchObject([{ reason: 'ask_state_refused', method: 'tools/call', requests: 1 }]);
  });

  it('a declined answer refuses the call, and the server never receives it', async () => {
    const { s, question } = await asked();
    try {
      retry(s, 3, question, question.requestState, { text: 'held' }, 'decline');
      expect(refusedMessage(await answerTo(s, 3))).toMatch(/mcp-warden refused/);
    } finally {
      s.close();
      await s.exited;
    }
    expect(echoCalls()).toEqual([]);
    const events = auditEvents(h.home);
    expect(events.filter((e) => e.event === 'call_asked')).toMatchObject([{ tool: 'echo', answer: 'decline' }]);
    expect(events.filter((e) => e.event === 'call_refused')).toMatchObject([{ tool: 'echo', reason: 'ask_declined' }]);
  });
});

describe("the warden's state and a server's never mix in one retry", () => {
  it("a retry with the warden's state and a second answer beside the warden's is refused, and the server never receives the call", async () => {
    const { s, question } = await asked();
    try {
      const key = Object.keys(question.inputRequests)[0] as string;
      s.send(modernLine(3, 'tools/call', { name: 'echo', arguments: { text: 'held' }, inputResponses: { [key]: { action: 'accept' }, confirm: { action: 'accept', content: { confirm: true } } }, requestState: question.requestState }));
      expect(refusedMessage(await answerTo(s, 3))).toMatch(/mcp-warden refused/);
    } finally {
      s.close();
      await s.exited;
    }
    expect(echoCalls()).toEqual([]);
  });

  it("a retry with the warden's state and no answer to the warden's question is refused", async () => {
    const { s, question } = await asked();
    try {
      s.send(modernLine(3, 'tools/call', { name: 'echo', arguments: { text: 'held' }, inputResponses: { confirm: { action: 'accept' } }, requestState: question.requestState }));
      expect(refusedMessage(await answerTo(s, 3))).toMatch(/mcp-warden refused/);
    } finally {
      s.close();
      await s.exited;
    }
    expect(echoCalls()).toEqual([]);
  });

  it("an answer keyed as the warden's question beside a server's requestState is refused: nothing of the warden's reaches the server", async () => {
    const { s, question } = await asked();
    try {
      const key = Object.keys(question.inputRequests)[0] as string;
      s.send(modernLine(3, 'tools/call', { name: 'confirm', arguments: {}, inputResponses: { [key]: { action: 'accept' } }, requestState: 'server-opaque-1' }));
      expect(refusedMessage(await answerTo(s, 3))).toMatch(/mcp-warden refused/);
    } finally {
      s.close();
      await s.exited;
    }
    expect(calls('confirm')).toEqual([]);
  });

  it.each([
    ["the warden's retry with a case variant of requestState beside it", (key: string, state: string) => ({ inputResponses: { [key]: { action: 'accept' } }, requestState: state, RequestState: 'server-opaque-1' })],
    ["the warden's state under a case variant of requestState alone", (key: string, state: string) => ({ INPUTRESPONSES: { [key]: { action: 'accept' } }, REQUESTSTATE: state })],
  ])('%s is refused (a server reading names without regard to case would read another state), and the server never receives the call', async (_what, members) => {
    const { s, question } = await asked();
    try {
      const key = Object.keys(question.inputRequests)[0] as string;
      s.send(modernLine(3, 'tools/call', { name: 'echo', arguments: { text: 'held' }, ...members(key, question.requestState) }));
      const answer = await answerTo(s, 3);
      expect(answer.error).toMatchObject({ code: -32602, data: { reason: 'ask_state_refused' } });
    } finally {
      s.close();
      await s.exited;
    }
    expect(echoCalls()).toEqual([]);
  });

  it('the call retried without the warden\'s state is an ordinary call under the rules: asked again, with another requestState', async () => {
    const { s, question } = await asked();
    try {
      s.send(modernLine(3, 'tools/call', { name: 'echo', arguments: { text: 'held' }, inputResponses: { confirm: { action: 'accept' } }, requestState: 'server-opaque-1' }));
      const again = (await answerTo(s, 3)).result as InputRequired;
      expect(again.resultType).toBe('input_required');
      expect(again.requestState).not.toBe(question.requestState);
    } finally {
      s.close();
      await s.exited;
    }
    expect(echoCalls()).toEqual([]);
  });

  it("a server's input_required after the user's yes: its retry reaches the server unchanged without a second question, once", async () => {
    writeRules(h.home, 'ask27', { tools: { confirm: { kind: 'destructive' } } });
    h.scenario({ inputRequired: { resultType: 'input_required', inputRequests: { ok: { method: 'elicitation/create', params: { mode: 'form', message: 'Really confirm?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } } } }, requestState: 'server-opaque-1' } });
    const s = new RawSession(h.home, 'ask27');
    try {
      s.send(modernLine(1, 'tools/call', { name: 'confirm', arguments: {} }));
      const question = (await answerTo(s, 1)).result as InputRequired;
      const key = Object.keys(question.inputRequests)[0] as string;
      s.send(modernLine(2, 'tools/call', { name: 'confirm', arguments: {}, inputResponses: { [key]: { action: 'accept' } }, requestState: question.requestState }));
      const server = (await answerTo(s, 2)).result as InputRequired;
      expect(server).toMatchObject({ resultType: 'input_required', requestState: 'server-opaque-1' });
      const retried = { name: 'confirm', arguments: {}, inputResponses: { ok: { action: 'accept', content: { ok: true } } }, requestState: 'server-opaque-1' };
      s.send(modernLine(3, 'tools/call', retried));
      expect((await answerTo(s, 3)).result).toMatchObject({ content: [{ type: 'text', text: 'confirmed' }] });
      s.send(modernLine(4, 'tools/call', retried)); // the server's state again: a new call, asked again
      expect(((await answerTo(s, 4)).result as InputRequired).requestState).toMatch(/^mcp-warden-ask-/);
    } finally {
      s.close();
      await s.exited;
    }
    const received = calls('confirm');
    expect(received).toHaveLength(2);
    expect(received[0]).not.toHaveProperty('requestState');
    expect(received[1]).toMatchObject({ inputResponses: { ok: { action: 'accept', content: { ok: true } } }, requestState: 'server-opaque-1' });
  });
});

describe('what a retry may carry is bounded', () => {
  it.each([
    ['a requestState over 64 KiB', { requestState: 'x'.repeat(64 * 1024 + 1) }],
    ['more than 32 inputResponses', { inputResponses: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, { action: 'accept' }])), requestState: 's' }],
    ['an inputResponses key over 256 characters', { inputResponses: { ['k'.repeat(257)]: { action: 'accept' } }, requestState: 's' }],
  ])('a retry with %s is refused, and the server never receives it', async (_what, extra) => {
    const s = new RawSession(h.home, 'ask27');
    try {
      s.send(modernLine(1, 'tools/call', { name: 'confirm', arguments: {}, ...extra }));
      const answer = await answerTo(s, 1);
      expect(answer.error).toMatchObject({ code: -32602 });
      expect(refusedMessage(answer)).toMatch(/mcp-warden refused/);
    } finally {
      s.close();
      await s.exited;
    }
    expect(calls('confirm')).toEqual([]);
  });
});

describe("a server's input_required over the bounds", () => {
  it('one whose requestState is over 64 KiB is refused: the client never sees it (its retry would be refused)', async () => {
    h.scenario({ inputRequired: { resultType: 'input_required', inputRequests: { ok: { method: 'elicitation/create', params: { mode: 'form', message: 'Sure?', requestedSchema: { type: 'object', properties: {} } } } }, requestState: 'y'.repeat(64 * 1024 + 1) } });
    const s = new RawSession(h.home, 'ask27');
    try {
      s.send(modernLine(1, 'tools/call', { name: 'confirm', arguments: {} }));
      const answer = await answerTo(s, 1);
      expect(answer.error).toMatchObject({ code: -32001 });
      expect(refusedMessage(answer)).toMatch(/mcp-warden refused the answer of server 'ask27' to tools\/call: its requestState is over 65536 characters/);
    } finally {
      s.close();
      await s.exited;
    }
    expect(s.stdoutBytes.toString()).not.toContain('yyyy');
  });
});

describe('the answer to the warden\'s question must come within the rules\' askTimeoutSeconds', () => {
  it('a retry after the bound is refused (ask_declined), and the server never receives the call', async () => {
    writeRules(h.home, 'ask27', { askTimeoutSeconds: 1, tools: { echo: { kind: 'destructive' } } });
    const { s, question } = await asked();
    try {
      await new Promise((r) => setTimeout(r, 1100)); // the bound itself is what is tested: let it pass
      retry(s, 3, question, question.requestState);
      const answer = await answerTo(s, 3);
      expect(answer.error).toMatchObject({ code: -32001, data: { reason: 'ask_declined' } });
      expect(refusedMessage(answer)).toMatch(/no answer within 1 s/);
    } finally {
      s.close();
      await s.exited;
    }
    expect(echoCalls()).toEqual([]);
  });
});

describe("the revision's error for a client that cannot be asked", () => {
  it('a call whose envelope declares no form elicitation is refused with -32021 naming the capability, and the server never receives it', async () => {
    const s = new RawSession(h.home, 'ask27');
    try {
      s.send(modernLine(1, 'tools/call', { name: 'echo', arguments: { text: 'held' } }, envelope('no-elicitation', {})));
      const answer = await answerTo(s, 1);
      expect(answer.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: { form: {} } }, reason: 'ask_unavailable' } });
      expect(refusedMessage(answer)).toMatch(/mcp-warden refused/);
    } finally {
      s.close();
      await s.exited;
    }
    expect(echoCalls()).toEqual([]);
  });
});
