import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeRules } from '../helpers/rules.js';
import { RawSession, answerTo, hostileHome, modernLine, type Sdk2Home } from './helpers.js';

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
  });
});
