import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MARKER, RawSession, answerTo, envelope, hostileHome, modernLine, parsed, toolsOf, type Sdk2Home } from './helpers.js';

// Issue 27, red team: in the modern era every request carries the client's identity and capabilities in its
// `_meta` envelope, so a server can answer each client differently. The client's own pages are judged whatever
// the server made of its envelope; and the warden's own requests carry the client's envelope, byte for byte,
// so a server cannot show the warden one surface and the client another.

let h: Sdk2Home;
beforeAll(() => {
  h = hostileHome('who');
});
afterAll(() => h.cleanup());

const VICTIM = envelope('victim-client', { elicitation: { form: {} }, roots: {} });

describe('listings that differ by the _meta client info', () => {
  it("a listing drifted only for the client's clientInfo is judged: the drifted tool never reaches the client (enforce)", async () => {
    h.scenario({ driftFor: 'victim-client' });
    const s = new RawSession(h.home, 'who');
    try {
      s.send(modernLine(1, 'tools/list', {}, VICTIM));
      expect(toolsOf(await answerTo(s, 1)).map((t) => t.name)).toEqual(['poke', 'confirm']);
      s.send(modernLine(2, 'tools/call', { name: 'echo', arguments: { text: 'x' } }, VICTIM));
      expect(((await answerTo(s, 2)).error as { message: string }).message).toMatch(/mcp-warden refused/);
    } finally {
      s.close();
      await s.exited;
    }
    expect(s.stdoutBytes.toString()).not.toContain(MARKER);
  });

  it("the warden's own re-listing carries the client's envelope exactly: every request the server reads has the same _meta", async () => {
    h.scenario({ notify: [{ method: 'notifications/tools/list_changed', params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen:1' } } }] });
    h.clearLog();
    const s = new RawSession(h.home, 'who');
    try {
      s.send(JSON.stringify({ jsonrpc: '2.0', id: 'listen:1', method: 'subscriptions/listen', params: { _meta: VICTIM, notifications: { toolsListChanged: true } } }) + '\n');
      await s.until(() => parsed(s).some((m) => m.method === 'notifications/subscriptions/acknowledged' || m.id === 'listen:1'), 'the acknowledgement');
      expect(parsed(s)).toContainEqual(expect.objectContaining({ method: 'notifications/subscriptions/acknowledged' }));
      s.send(modernLine(1, 'tools/list', {}, VICTIM));
      expect(toolsOf(await answerTo(s, 1)).map((t) => t.name)).toEqual(['echo', 'poke', 'confirm']);
      s.send(modernLine(2, 'tools/call', { name: 'poke', arguments: {} }, VICTIM));
      await answerTo(s, 2);
      await s.until(() => parsed(s).some((m) => m.method === 'notifications/tools/list_changed'), 'the list change, after the re-listing');
    } finally {
      s.close();
      await s.exited;
    }
    const requests = h.received().filter((m) => m.id !== undefined && m.method !== undefined);
    // listen, the client's listing, poke, and at least one listing of the warden's own.
    expect(requests.filter((m) => m.method === 'tools/list').length).toBeGreaterThanOrEqual(2);
    for (const r of requests) expect((r.params as { _meta?: unknown })._meta, `${String(r.method)} ${String(r.id)}`).toEqual(VICTIM);
  });
});
