import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawSession, answerTo, hostileHome, modernLine, toolsOf, type Sdk2Home } from './helpers.js';

// Issue 27 item 1 (docs/adr/0044, recommendation 1): the era of a connection is decided by its first message, as
// the SDK's serveStdio decides it, and kept. A message of the other era later on the same connection is refused
// by the warden and never relayed: a server that answers both on one connection must not get a second,
// differently judged handshake in (this hostile server answers initialize at any time).

let h: Sdk2Home;
beforeAll(() => {
  h = hostileHome('pinned');
});
afterAll(() => h.cleanup());

const initialize = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n';
const methods = (): unknown[] => h.received().map((m) => m.method);

describe('one era per connection', () => {
  it('after a modern request, a claim-less initialize is refused by the warden and never reaches the server', async () => {
    h.scenario({});
    h.clearLog();
    const s = new RawSession(h.home, 'pinned');
    try {
      s.send(modernLine(1, 'tools/list'));
      expect(toolsOf(await answerTo(s, 1)).map((t) => t.name)).toEqual(['echo', 'poke', 'confirm']);
      s.send(initialize(2));
      const answer = await answerTo(s, 2);
      expect(answer.result).toBeUndefined();
      // Answered as serveStdio answers a request that names no protocol version on a modern connection.
      expect(answer.error).toEqual({
        code: -32022,
        message: expect.stringMatching(/^mcp-warden: not forwarded: Unsupported protocol version: the request did not name a protocol version \(this connection speaks revision 2026-07-28;/),
        data: { supported: ['2026-07-28'] },
      });
    } finally {
      s.close();
      await s.exited;
    }
    expect(methods()).not.toContain('initialize');
  });

  it('after a 2025 handshake, a server/discover never reaches the server', async () => {
    h.scenario({});
    h.clearLog();
    const s = new RawSession(h.home, 'pinned');
    try {
      s.send(initialize(1));
      expect((await answerTo(s, 1)).result).toBeDefined();
      s.send(modernLine(2, 'server/discover'));
      const answer = await answerTo(s, 2);
      expect(answer.result).toBeUndefined();
      // A modern message on a 2025 connection: the warden's refusal, never relayed.
      expect(answer.error).toEqual({ code: -32001, message: expect.stringMatching(/^mcp-warden: not forwarded: this connection is of revision 2025 .* \(start a new connection without initialize to use revision 2026-07-28\)\.$/) });
    } finally {
      s.close();
      await s.exited;
    }
    expect(methods()).not.toContain('server/discover');
  });
});
