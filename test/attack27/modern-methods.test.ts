import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODERN, RawSession, answerTo, envelope, hostileHome, modernLine, toolsOf, type Sdk2Home } from './helpers.js';

// Issue 27 items 1 and 6 (docs/adr/0044, recommendations 1 and 8): on a connection of revision 2026-07-28 the
// warden relays only the revision's requests, each with its `_meta` envelope. `ping` and `logging/setLevel` are
// gone from the revision: the warden answers them "method not found" as its servers do; a request without the
// envelope, or with one that names another revision or lacks the client capabilities, is answered with the
// revision's error. None of them reaches the server (this hostile server answers anything it is sent). A client
// that probes with server/discover on the connection and then falls back to initialize gets a gated 2025 session.

let h: Sdk2Home;
beforeAll(() => {
  h = hostileHome('methods');
});
afterAll(() => h.cleanup());

const methods = (): unknown[] => h.received().map((m) => m.method);
const plain = (id: number, method: string, params: Record<string, unknown> = {}): string => JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';

describe('requests on a modern connection', () => {
  it('ping and logging/setLevel are answered "method not found" by the warden; requests without a valid envelope get the revision\'s errors; none reaches the server', async () => {
    h.scenario({});
    h.clearLog();
    const s = new RawSession(h.home, 'methods');
    try {
      s.send(modernLine(1, 'tools/list'));
      expect(toolsOf(await answerTo(s, 1)).map((t) => t.name)).toEqual(['echo', 'poke', 'confirm']);
      s.send(modernLine(2, 'ping') + modernLine(3, 'logging/setLevel', { level: 'debug' }));
      expect(await answerTo(s, 2)).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found' } });
      expect(await answerTo(s, 3)).toEqual({ jsonrpc: '2.0', id: 3, error: { code: -32601, message: 'Method not found' } });
      s.send(plain(4, 'tools/call', { name: 'echo', arguments: { text: 'no envelope' } }));
      expect(await answerTo(s, 4)).toMatchObject({ error: { code: -32022, data: { supported: [MODERN] } } });
      s.send(modernLine(5, 'tools/call', { name: 'echo', arguments: { text: 'old' } }, { ...envelope(), 'io.modelcontextprotocol/protocolVersion': '2025-11-25' }));
      expect(await answerTo(s, 5)).toMatchObject({ error: { code: -32022, data: { supported: [MODERN], requested: '2025-11-25' } } });
      const { 'io.modelcontextprotocol/clientCapabilities': _dropped, ...noCapabilities } = envelope();
      s.send(modernLine(6, 'tools/call', { name: 'echo', arguments: { text: 'no capabilities' } }, noCapabilities));
      expect(await answerTo(s, 6)).toMatchObject({ error: { code: -32602, data: { envelope: { key: 'io.modelcontextprotocol/clientCapabilities', problem: 'missing' } } } });
    } finally {
      s.close();
      await s.exited;
    }
    expect(methods()).not.toContain('ping');
    expect(methods()).not.toContain('logging/setLevel');
    // (the session-start canaries call a tool the server does not list; none of the client's calls of echo arrives)
    expect(h.received().filter((m) => m.method === 'tools/call' && (m.params as { name?: string }).name === 'echo')).toEqual([]);
  });

  it('a server/discover probe on the connection, then initialize: the 2025 handshake is gated and judged like any other', async () => {
    h.scenario({});
    h.clearLog();
    const s = new RawSession(h.home, 'methods');
    try {
      s.send(modernLine('d', 'server/discover'));
      expect((await answerTo(s, 'd')).result).toMatchObject({ supportedVersions: [MODERN] });
      s.send(plain(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } }));
      expect((await answerTo(s, 1)).result).toMatchObject({ instructions: 'Use echo to echo.' });
      s.send(plain(2, 'tools/list'));
      expect(toolsOf(await answerTo(s, 2)).map((t) => t.name)).toEqual(['echo', 'poke', 'confirm']);
      s.send(modernLine(3, 'tools/list'));
      expect((await answerTo(s, 3)).error).toBeDefined(); // the connection is 2025 now
    } finally {
      s.close();
      await s.exited;
    }
    // The warden's own listing came after the client's initialize, in the form of a 2025 request (not with the
    // probe's envelope); the client's request 3 never reached the server.
    const listings = h.received().filter((m) => m.method === 'tools/list');
    expect(listings.length).toBe(2);
    for (const l of listings) expect((l.params as { _meta?: Record<string, unknown> } | undefined)?._meta?.['io.modelcontextprotocol/protocolVersion']).toBeUndefined();
  });
});
