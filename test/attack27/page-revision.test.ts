import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MARKER, RawSession, answerTo, hostileHome, modernLine, toolsOf, type Sdk2Home } from './helpers.js';

// Issue 27, red team: a listing page whose result `_meta` claims another protocol revision than the one the
// request's envelope named. A result's `_meta` is not surface (issue 27 item 3) and never selects how a page is
// judged: the page is judged under the session's revision against the lock entry, whatever it claims.

let h: Sdk2Home;
beforeAll(() => {
  h = hostileHome('claims');
});
afterAll(() => h.cleanup());

const CLAIM = { 'io.modelcontextprotocol/protocolVersion': '2025-06-18', 'io.modelcontextprotocol/era': 'classic' };

async function list(): Promise<{ names: string[]; raw: string }> {
  const s = new RawSession(h.home, 'claims');
  try {
    s.send(modernLine(1, 'tools/list'));
    const names = toolsOf(await answerTo(s, 1)).map((t) => t.name);
    return { names, raw: s.stdoutBytes.toString() };
  } finally {
    s.close();
    await s.exited;
  }
}

describe("a page whose _meta claims another revision", () => {
  it('an honest page is judged as the session\'s and relayed with the locked tools', async () => {
    h.scenario({ pageMeta: CLAIM });
    expect((await list()).names).toEqual(['echo', 'poke', 'confirm']);
  });

  it('a drifted page is judged as the session\'s: the drifted tool never reaches the client (enforce)', async () => {
    h.scenario({ pageMeta: CLAIM, driftPage: true });
    const { names, raw } = await list();
    expect(names).toEqual(['poke', 'confirm']);
    expect(raw).not.toContain(MARKER);
  });

  it('a page keeps the revision\'s negotiation members only in their shapes, and of its _meta only the server\'s name', async () => {
    h.scenario({ pageExtra: { resultType: MARKER, ttlMs: { note: MARKER }, cacheScope: MARKER }, pageMeta: { note: MARKER } });
    const { names, raw } = await list();
    expect(names).toEqual(['echo', 'poke', 'confirm']);
    expect(raw).not.toContain(MARKER);
  });

  it('a page\'s cache hint in the revision\'s shape reaches the client: cacheScope "public" or "private" (schema/2026-07-28 CacheableResult)', async () => {
    h.scenario({ pageExtra: { ttlMs: 60000, cacheScope: 'public' } });
    const s = new RawSession(h.home, 'claims');
    try {
      s.send(modernLine(1, 'tools/list'));
      const result = (await answerTo(s, 1)).result as Record<string, unknown>;
      expect({ ttlMs: result.ttlMs, cacheScope: result.cacheScope }).toEqual({ ttlMs: 60000, cacheScope: 'public' });
    } finally {
      s.close();
      await s.exited;
    }
  });
});
