import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents } from '../helpers/warden.js';
import { MARKER, answerTo, initialize, line, readsHome, type ReadsHome } from './reads-helpers.js';

// Issue 26, item 4: nothing a server says reaches the client before the judge exists. A read pipelined behind
// initialize, a session that starts with ping (or never initializes), a retried initialize and revision
// 2026-07-28's server/discover must each end judged or refused, never relayed unjudged.

let h: ReadsHome;
beforeAll(() => {
  h = readsHome();
});
afterAll(() => h.cleanup());

const methods = (h: ReadsHome): unknown[] => h.received().map((m) => m.method);

describe('before the handshake is released', () => {
  it('a prompts/get pipelined behind initialize is refused and never reaches the server; a pipelined listing is judged at the release', async () => {
    h.serve({ prompts: [{ name: 'greet', description: `Greets the user. ${MARKER}` }], payload: MARKER });
    const s = h.session();
    s.send(initialize(1) + line('early', 'prompts/get', { name: 'greet' }) + line('early-list', 'prompts/list') + line('early-read', 'resources/read', { uri: 'file:///notes.txt' }));
    expect(await answerTo(s, 'early')).toEqual({
      jsonrpc: '2.0',
      id: 'early',
      error: { code: -32001, message: "mcp-warden refused prompts/get for server 'reads': the handshake is still being verified, and nothing is relayed before the initialize result; send it again after that result." },
    });
    expect((await answerTo(s, 'early-read')).error).toMatchObject({ code: -32001, message: expect.stringContaining('the handshake is still being verified') });
    expect((await answerTo(s, 1)).result).toBeDefined();
    expect(await answerTo(s, 'early-list')).toEqual({ jsonrpc: '2.0', id: 'early-list', result: { prompts: [] } });
    s.send(line('late', 'prompts/get', { name: 'greet' }));
    expect(await answerTo(s, 'late')).toMatchObject({ error: { code: -32001, message: expect.stringContaining('prompts/get of prompt "greet" of server \'reads\': changed or added since the lock (enforce)') } });
    s.close();
    expect((await s.exited).code).toBe(0);
    expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    expect(methods(h)).not.toContain('prompts/get');
    expect(methods(h)).not.toContain('resources/read');
    expect(auditEvents(h.home).filter((e) => e.event === 'client_message_refused').slice(-2)).toMatchObject([
      { server: 'reads', reason: 'during_handshake', method: 'prompts/get' },
      { server: 'reads', reason: 'during_handshake', method: 'resources/read' },
    ]);
  });

  it('a ping first leaves the session unjudged-free: the initialize after it is gated, and changed instructions refuse the server', async () => {
    h.serve({ instructions: `Use greet. ${MARKER}`, payload: MARKER });
    const s = h.session();
    s.send(line('p0', 'ping'));
    expect(await answerTo(s, 'p0')).toEqual({ jsonrpc: '2.0', id: 'p0', result: {} });
    s.send(initialize(1));
    const answer = await answerTo(s, 1);
    expect(answer.result).toBeUndefined();
    expect(answer.error).toMatchObject({ code: -32001, data: { cause: 'surface_refused', server: 'reads' } });
    expect((await s.exited).code).toBe(3);
    expect(s.stdoutBytes.toString()).not.toContain(MARKER);
  });

  it('a retried initialize after the server refused the first is gated and judged like the first', async () => {
    h.serve({ failFirstInit: true, instructions: `Use greet. ${MARKER}`, payload: MARKER });
    const s = h.session();
    s.send(initialize(1));
    // Its code reaches the client; its message, unjudged, only the warden's stderr (docs/adr/0052).
    expect(await answerTo(s, 1)).toMatchObject({ error: { code: -32603, message: expect.stringContaining("server 'reads' answered this request with an error") } });
    s.send(initialize(2));
    const answer = await answerTo(s, 2);
    expect(answer.result).toBeUndefined();
    expect(answer.error).toMatchObject({ code: -32001, data: { cause: 'surface_refused', server: 'reads' } });
    expect((await s.exited).code).toBe(3);
    expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    expect(s.stdoutBytes.toString()).not.toContain('not ready yet');
    expect(s.stderr).toContain('"not ready yet, try again"');
  });

  it('a retried initialize of an unchanged server opens a judged session whose reads are admitted', async () => {
    h.serve({ failFirstInit: true });
    const s = h.session();
    s.send(initialize(1));
    expect(await answerTo(s, 1)).toMatchObject({ error: { code: -32603 } });
    s.send(initialize(2));
    expect(await answerTo(s, 2)).toMatchObject({ result: { serverInfo: { name: 'reads-hostile' }, instructions: 'Use greet to say hello.' } });
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n' + line('g', 'prompts/get', { name: 'greet' }));
    expect(await answerTo(s, 'g')).toMatchObject({ result: { messages: [{ content: { text: 'Say hello.' } }] } });
    s.close();
    expect((await s.exited).code).toBe(0);
  });

  it('a second initialize after a released handshake is refused and never reaches the server', async () => {
    h.serve({});
    const s = h.session();
    s.send(initialize(1));
    expect((await answerTo(s, 1)).result).toBeDefined();
    // Changed instructions from here on (serve() also empties the log of what the server received).
    h.serve({ instructions: `Use greet. ${MARKER}` });
    s.send(initialize(2));
    expect(await answerTo(s, 2)).toEqual({
      jsonrpc: '2.0',
      id: 2,
      error: { code: -32001, message: "mcp-warden refused initialize for server 'reads': this session's handshake was already verified and released; start a new session to initialize again." },
    });
    s.close();
    expect((await s.exited).code).toBe(0);
    expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    expect(methods(h)).not.toContain('initialize');
  });
});

describe('a session with no initialize', () => {
  it('refuses every read and listing with the warden\'s own error, and the server receives none of them', async () => {
    h.serve({ payload: MARKER });
    const s = h.session();
    s.send(line('p0', 'ping'));
    expect(await answerTo(s, 'p0')).toEqual({ jsonrpc: '2.0', id: 'p0', result: {} });
    const asked: [string, Record<string, unknown>][] = [
      ['prompts/list', {}],
      ['resources/list', {}],
      ['resources/templates/list', {}],
      ['tools/list', {}],
      ['completion/complete', { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who', value: 'a' } }],
    ];
    s.send(asked.map(([m, p], i) => line(`u${i}`, m, p)).join(''));
    for (const [i, [m]] of asked.entries()) {
      expect(await answerTo(s, `u${i}`)).toEqual({
        jsonrpc: '2.0',
        id: `u${i}`,
        error: { code: -32001, message: `mcp-warden refused ${m} for server 'reads': this session has no verified handshake (send initialize first, or send every request with the _meta envelope of revision 2026-07-28).` },
      });
    }
    s.send(line('g', 'prompts/get', { name: 'greet' }) + line('r', 'resources/read', { uri: 'file:///notes.txt' }));
    expect(await answerTo(s, 'g')).toMatchObject({ error: { code: -32001, message: expect.stringContaining('of prompt "greet" of server \'reads\': no verified handshake on this session') } });
    expect(await answerTo(s, 'r')).toMatchObject({ error: { code: -32001, message: expect.stringContaining('of resource "file:///notes.txt" of server \'reads\': no verified handshake on this session') } });
    s.close();
    expect((await s.exited).code).toBe(0);
    expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    expect(methods(h)).toEqual(['ping']);
  });

  it('answers server/discover itself with "method not found", so a server\'s instructions in it never reach the client', async () => {
    h.serve({ discover: true, payload: MARKER });
    const s = h.session();
    s.send(line('d1', 'server/discover', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } }));
    expect(await answerTo(s, 'd1')).toEqual({
      jsonrpc: '2.0',
      id: 'd1',
      error: { code: -32601, message: 'Method not found: server/discover is relayed only with a valid revision 2026-07-28 _meta envelope, on a connection that did not begin in revision 2025; use initialize.' },
    });
    s.send(initialize(1));
    expect(await answerTo(s, 1)).toMatchObject({ result: { instructions: 'Use greet to say hello.' } });
    s.close();
    expect((await s.exited).code).toBe(0);
    expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    expect(methods(h)).not.toContain('server/discover');
  });
});
