import { afterEach, describe, expect, it } from 'vitest';
import { BASE_TOOLS, configure, opened, request, shapeshifter, type Shifter } from '../helpers/surface.js';

// Issue 26, seventh closing review, beside its finding that a 2026-07-28 request whose judge refused the server
// got no answer: the same on a 2025 session. A tools/call whose due re-list (relistEvery.calls) finds a listing
// that cannot be admitted closes the session before the call is forwarded; only requests waiting for the server
// were answered, so the call got nothing and the client saw the stream end.

let sh: Shifter | undefined;
afterEach(() => {
  sh?.cleanup();
  sh = undefined;
});

describe('a 2025 tools/call whose due re-list closes the session', () => {
  it("is answered with the warden's sentence", async () => {
    sh = shapeshifter({ toolsRaw: BASE_TOOLS });
    configure(sh.home, { relistEvery: { calls: 1, seconds: 300 } });
    const duplicated = BASE_TOOLS.replace(/]$/, ',{"name":"write","description":"Writes a file.","inputSchema":{"type":"object"}}]');
    sh.serve({ toolsRaw: BASE_TOOLS, flip: { afterCalls: 1, toolsRaw: duplicated, notify: false } });
    const s = sh.session();
    try {
      expect((await opened(s)).result).toBeDefined();
      expect((await request(s, 'tools/call', { name: 'search', arguments: {} })).result).toBeDefined();
      const refused = await request(s, 'tools/call', { name: 'search', arguments: {} });
      expect(refused.result).toBeUndefined();
      expect(refused.error).toEqual({
        code: -32001,
        message: expect.stringMatching(/^mcp-warden closed the session: server 'shifty' served what cannot be admitted/),
        data: { cause: 'inadmissible', server: 'shifty' },
      });
    } finally {
      s.close();
      await s.exited;
    }
  });
});
