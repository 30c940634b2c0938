import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, RawSession, SERVERS, addServer, auditEvents, tempDir } from '../helpers/warden.js';
import { writeRules } from '../helpers/rules.js';
import { answerTo, opened, parsed, recorderHome, send, type Home } from '../attack6/common.js';

// Issue 26, item 13: the client's notifications/cancelled for a call held for the user's answer (an `ask` tool),
// written in the same chunk as the accept, in either order. The call must never reach the server (the server
// logs every line it receives: test/servers/attack6/recorder.mjs), and nothing is owed to the client for it.

let h: Home;
beforeAll(() => {
  h = recorderHome(); // send: remote-change, ask by default
});
afterAll(() => h.cleanup());

/** A session with a call of `send` held for the user (client id `callId`); returns the question's id. */
async function held(s: RawSession, callId: number, text: string): Promise<string> {
  send(s, { id: callId, method: 'tools/call', params: { name: 'send', arguments: { to: 'x', text } } });
  await s.until(() => parsed(s).some((m) => m.method === 'elicitation/create'), 'the question');
  return parsed(s).find((m) => m.method === 'elicitation/create')?.id as string;
}

const line = (msg: Record<string, unknown>): string => JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n';

describe('a cancellation that arrives with the accept of a held call', () => {
  for (const order of ['accept, then cancel', 'cancel, then accept'] as const) {
    it(`is never forwarded when the client writes ${order} in one chunk`, async () => {
      const s = h.session();
      await opened(s);
      const text = `held-${order.replace(/\W/g, '')}`;
      const question = await held(s, 3, text);
      const accept = line({ id: question, result: { action: 'accept', content: {} } });
      const cancel = line({ method: 'notifications/cancelled', params: { requestId: 3, reason: 'the user gave up' } });
      s.send(order === 'accept, then cancel' ? accept + cancel : cancel + accept);
      send(s, { id: 4, method: 'ping' });
      await answerTo(s, 4, 'the ping behind them');
      // The server answers in order: had the call been forwarded before the ping, it would have logged it.
      expect(h.received()).not.toContain(text);
      expect(h.received()).not.toContain('notifications/cancelled');
      expect(parsed(s).some((m) => m.id === 3)).toBe(false); // a cancelled request is owed no answer
      s.close();
      await s.exited;
      expect(h.received()).not.toContain(text);
      const asked = auditEvents(h.home).filter((e) => e.event === 'call_asked');
      expect(asked.length).toBeGreaterThan(0);
    });
  }

  it('still forwards an accepted call that the client did not cancel (the next call of the same session)', async () => {
    const s = h.session();
    await opened(s);
    const first = await held(s, 3, 'cancelled-first');
    s.send(line({ id: first, result: { action: 'accept', content: {} } }) + line({ method: 'notifications/cancelled', params: { requestId: 3 } }));
    send(s, { id: 4, method: 'ping' });
    await answerTo(s, 4, 'the ping');
    send(s, { id: 5, method: 'tools/call', params: { name: 'send', arguments: { to: 'x', text: 'accepted-second' } } });
    await s.until(() => parsed(s).filter((m) => m.method === 'elicitation/create').length === 2, 'the second question');
    const second = parsed(s).filter((m) => m.method === 'elicitation/create')[1]?.id as string;
    send(s, { id: second, result: { action: 'accept', content: {} } });
    const answer = await answerTo(s, 5, 'the second call');
    expect(JSON.stringify(answer.result)).toContain('accepted-second');
    expect(h.received()).not.toContain('cancelled-first');
    s.close();
    await s.exited;
  });
});

describe('a cancellation that arrives once the accepted call was forwarded', () => {
  it('reaches the server with the id the server was given for the call', async () => {
    const dir = tempDir();
    try {
      const home = path.join(dir, 'home');
      const log = path.join(dir, 'received.jsonl');
      fs.writeFileSync(log, '');
      const added = addServer(home, 'held', [NODE, path.join(SERVERS, 'attack22', 'small-held-call.mjs')], ['--env', `LOG_FILE=${log}`]);
      if (added.code !== 0) throw new Error(added.stderr);
      writeRules(home, 'held', { tools: { send: { kind: 'remote-change' } } }); // ask, by default
      const s = new RawSession(home, 'held');
      await opened(s);
      const question = await held(s, 3, 'runs-long');
      send(s, { id: question, result: { action: 'accept', content: {} } });
      send(s, { id: 4, method: 'ping' });
      await answerTo(s, 4, 'the ping behind the accept');
      const received = (): Record<string, unknown>[] => fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const call = received().find((m) => m.method === 'tools/call' && JSON.stringify(m.params).includes('runs-long'));
      expect(call).toBeDefined();
      send(s, { method: 'notifications/cancelled', params: { requestId: 3, reason: 'the user gave up' } });
      send(s, { id: 5, method: 'ping' });
      await answerTo(s, 5, 'the ping behind the cancellation');
      const cancels = received().filter((m) => m.method === 'notifications/cancelled');
      expect(cancels).toHaveLength(1);
      expect((cancels[0]?.params as { requestId: unknown }).requestId).toEqual(call?.id);
      s.close();
      await s.exited;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
