import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawSession, answerTo, hostileHome, modernLine, parsed, type Sdk2Home } from './helpers.js';

// Issue 27 item 6: `ping` is gone in revision 2026-07-28, and a stdio server of that revision sends no requests.
// A server's ping on a modern connection never reaches the client, and is not answered (the SDK v2 client writes
// no responses there: docs/adr/0051); the client's requests do not wait for a pong (in a 2025 session the ping
// passes at once, and the client's requests wait for its pong: early-pings.ts).

let h: Sdk2Home;
beforeAll(() => {
  h = hostileHome('pinger');
});
afterAll(() => h.cleanup());

describe("a server's ping on a modern connection", () => {
  it('never reaches the client and is not answered; the calls after it are answered', async () => {
    h.scenario({ notify: [{ id: 'server-ping-1', method: 'ping' }] });
    const s = new RawSession(h.home, 'pinger');
    try {
      s.send(modernLine(1, 'tools/list'));
      await answerTo(s, 1);
      s.send(modernLine(2, 'tools/call', { name: 'poke', arguments: {} }));
      expect((await answerTo(s, 2)).result).toMatchObject({ content: [{ type: 'text', text: 'poked' }] });
      s.send(modernLine(3, 'tools/call', { name: 'echo', arguments: { text: 'after' } }));
      expect((await answerTo(s, 3)).result).toMatchObject({ content: [{ type: 'text', text: 'echo: after' }] });
    } finally {
      s.close();
      await s.exited;
    }
    expect(parsed(s).filter((m) => m.method === 'ping')).toEqual([]);
    expect(h.received().filter((m) => m.id === 'server-ping-1')).toEqual([]);
  });
});
