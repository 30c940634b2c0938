import { beforeAll, describe, expect, it } from 'vitest';
import { RawSession } from '../helpers/warden.js';
import { scenarioHome } from '../helpers/scenario-home.js';
import { MARKER, answerTo, modernLine } from '../attack27/helpers.js';

// Issue 26, sixth closing review, ADR 0051. Session.ts decides where a server's ping goes when it is read
// (`!this.modern.active`: EarlyPings, under a warden id), but the era changes when the client's line is
// *processed* by the queue. A ping read while a server/discover probe is open, but queued behind the client's
// fallback initialize (the queue waits for an earlier ping's pong before relaying the discover), is processed
// once the connection is 2025: held with the handshake, then relayed after release as the server wrote it, its
// free-text id and params included ("a server's ping as a bare ping under an id of the warden's", threat model).

const sc = scenarioHome([{ id: 'probeping', server: 'attack29/probe-ping.mjs' }]);
beforeAll(() => sc.serve({ ping: true }));

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n';

describe("a server's ping read during a probe and processed after the fallback", () => {
  it('reaches the 2025 client bare and under an id of the warden\'s', async () => {
    const s = new RawSession(sc.home, 'probeping');
    try {
      await s.until(() => s.stdoutBytes.includes('"method":"ping"'), 'the first ping');
      // The client probes and falls back at once (no pong to the first ping yet).
      s.send(modernLine(1, 'server/discover') + initialize);
      const init = await answerTo(s, 2);
      expect(init.result).toMatchObject({ serverInfo: { name: 'probe-ping' } });
      // The server's second ping (the one with its text in the id and params, sent 600 ms after its start) is
      // the event: wait until the client has been asked it.
      const pings = (): Record<string, unknown>[] => s.lines().map((l) => JSON.parse(l.toString()) as Record<string, unknown>).filter((m) => m.method === 'ping');
      await s.until(() => pings().length === 2, "the server's second ping");
      const [first, second] = pings();
      for (const p of [first, second]) expect(p).toEqual({ jsonrpc: '2.0', id: expect.stringMatching(/^mcp-warden-ping-[0-9a-f]{24}-\d+$/), method: 'ping' });
      expect(second?.id).not.toBe(first?.id);
      expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    } finally {
      s.close();
      await s.exited;
    }
  });
});
