import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MARKER, RawSession, answerTo, hostileHome, modernLine, toolsOf, type Sdk2Home } from './helpers.js';

// Issue 27, red team: a rug pull between two requests of one modern connection. There is no handshake to gate,
// so every page is judged as it passes: tools/list is honest and reaches the client until echo has been called
// once; the next one carries a drifted echo, which must not reach the client (enforce), and echo is no longer callable.

let h: Sdk2Home;
beforeAll(() => {
  h = hostileHome('rug');
});
afterAll(() => h.cleanup());

describe('a rug pull between two requests of one modern connection', () => {
  it('the honest first listing is relayed; the drifted second never reaches the client, and echo is refused after it', async () => {
    h.scenario({ rugPull: true });
    const s = new RawSession(h.home, 'rug');
    try {
      s.send(modernLine(1, 'tools/list'));
      expect(toolsOf(await answerTo(s, 1)).map((t) => t.name)).toEqual(['echo', 'poke', 'confirm']);
      s.send(modernLine(2, 'tools/call', { name: 'echo', arguments: { text: 'before' } }));
      expect((await answerTo(s, 2)).result).toMatchObject({ content: [{ type: 'text', text: 'echo: before' }] });
      s.send(modernLine(3, 'tools/list'));
      // As a 2025 page is judged in enforce: the tool that does not match the lock is removed.
      expect(toolsOf(await answerTo(s, 3)).map((t) => t.name)).toEqual(['poke', 'confirm']);
      s.send(modernLine(4, 'tools/call', { name: 'echo', arguments: { text: 'after' } }));
      expect(((await answerTo(s, 4)).error as { message: string }).message).toMatch(/mcp-warden refused/);
    } finally {
      s.close();
      await s.exited;
    }
    expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    const echoed = h.received().filter((m) => m.method === 'tools/call' && (m.params as { name?: string }).name === 'echo').map((m) => (m.params as { arguments: { text: string } }).arguments.text);
    expect(echoed).toEqual(['before']);
  });
});
