import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawSession, SERVERS, addServer, auditEvents, tempDir } from '../helpers/warden.js';

// Revision 2026-07-28 is stateless: a client may skip initialize, ask `server/discover`, and send each request
// with `_meta["io.modelcontextprotocol/protocolVersion"]`. Such a connection is judged request by request only
// when its envelope is valid (test/attack27; docs/adr/0044-modern-era.md). The requests here claim the revision
// without the envelope's required client capabilities: they open no modern connection, are read as 2025 traffic
// before a handshake, and are refused, fail closed; the warden answers server/discover itself with "method not
// found" (never relayed: its answer carries instructions), so the client falls back to initialize and gets an
// ordinary, judged session.

const META = { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } };
let dir: string;
let home: string;
let callLog: string;
let logFile: string;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  callLog = path.join(dir, 'calls.log');
  logFile = path.join(dir, 'received.log');
  // test/servers/two-faced.mjs with no scenario is an honest legacy server: one tool, echo, each call of it
  // appended to CALL_LOG; every line it receives appended to LOG_FILE; "method not found" to anything else.
  addServer(home, 'legacy', [process.execPath, path.join(SERVERS, 'two-faced.mjs')], ['--env', `CALL_LOG=${callLog}`, '--env', `LOG_FILE=${logFile}`]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The answer with this id among the lines the client received, once it arrived. */
async function answerTo(s: RawSession, id: string): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await s.until(() => {
    found = s.lines().map((l) => JSON.parse(l.toString()) as Record<string, unknown>).find((m) => m.id === id);
    return found !== undefined;
  }, `the answer to request ${id}`);
  return found as Record<string, unknown>;
}

function reset(): void {
  fs.rmSync(callLog, { force: true });
  fs.rmSync(logFile, { force: true });
}

describe('a stateless (2026-07-28) session', () => {
  it('refuses a tools/call with the warden\'s own error, and the server never receives it', async () => {
    reset();
    const s = new RawSession(home, 'legacy');
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 'c1', method: 'tools/call', params: { name: 'echo', arguments: { text: 'unjudged' }, ...META } }) + '\n');
    const answer = await answerTo(s, 'c1');
    s.close();
    expect((await s.exited).code).toBe(0);
    expect(answer).toEqual({
      jsonrpc: '2.0',
      id: 'c1',
      error: { code: -32001, message: `mcp-warden refused the call to tool "echo" of server 'legacy': no verified tool listing on this session yet. Run 'mcp-warden diff legacy' to see why.` },
    });
    expect(fs.existsSync(callLog) ? fs.readFileSync(callLog, 'utf8') : '').toBe('');
    expect(auditEvents(home).filter((e) => e.event === 'call_refused').pop()).toMatchObject({ server: 'legacy', tool: 'echo', reason: 'no verified tool listing on this session yet' });
    expect(s.stderr).toContain('refused a call to tool "echo": no verified tool listing on this session yet');
  });

  it('answers server/discover itself with "method not found", and the server never receives it', async () => {
    reset();
    const s = new RawSession(home, 'legacy');
    const discover = JSON.stringify({ jsonrpc: '2.0', id: 'd1', method: 'server/discover', params: { ...META } });
    s.send(discover + '\n');
    const answer = await answerTo(s, 'd1');
    s.close();
    await s.exited;
    expect(answer).toEqual({ jsonrpc: '2.0', id: 'd1', error: { code: -32601, message: 'Method not found: server/discover is relayed only with a valid revision 2026-07-28 _meta envelope, on a connection that did not begin in revision 2025; use initialize.' } });
    const received = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '';
    expect(received).not.toContain('server/discover');
  });

  it('after the warden\'s "method not found" to server/discover, a client that falls back to initialize gets a judged session', async () => {
    reset();
    const s = new RawSession(home, 'legacy');
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 'd1', method: 'server/discover', params: { ...META } }) + '\n');
    expect(await answerTo(s, 'd1')).toMatchObject({ error: { code: -32601 } });
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n');
    let init: Record<string, unknown> | undefined;
    await s.until(() => (init = s.lines().map((l) => JSON.parse(l.toString()) as Record<string, unknown>).find((m) => m.id === 1)) !== undefined, 'the initialize result');
    expect(init).toMatchObject({ result: { serverInfo: { name: 'two-faced' } } });
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    s.send('{"jsonrpc":"2.0","id":"l1","method":"tools/list"}\n');
    expect(await answerTo(s, 'l1')).toMatchObject({ result: { tools: [{ name: 'echo' }] } });
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 'c1', method: 'tools/call', params: { name: 'echo', arguments: { text: 'judged' } } }) + '\n');
    expect(await answerTo(s, 'c1')).toMatchObject({ result: { content: [{ type: 'text', text: 'echo: judged' }] } });
    s.close();
    expect((await s.exited).code).toBe(0);
    // The surface was judged at this session's handshake, as for any client that starts with initialize.
    const events = auditEvents(home);
    const launches = events.flatMap((e, i) => (e.event === 'launch' && e.server === 'legacy' ? [i] : []));
    const after = events.slice(launches.at(-1));
    expect(after.find((e) => e.event === 'surface' && e.source === 'handshake')).toMatchObject({ pinState: 'matched' });
  });
});
