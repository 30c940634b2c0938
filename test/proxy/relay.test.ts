import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, auditEvents, tempDir } from '../helpers/warden.js';

let home: string;
let record: string;

beforeAll(() => {
  home = tempDir();
  record = path.join(home, 'received.bin');
  addServer(home, 'raw', [NODE, path.join(SERVERS, 'raw-echo.mjs')], ['--env', `RECORD_FILE=${record}`]);
  addServer(home, 'noisy', [NODE, path.join(SERVERS, 'noisy.mjs')]);
  addServer(home, 'basic', [NODE, path.join(SERVERS, 'basic.mjs')]);
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

describe('the relay', () => {
  it('delivers a big id and unusual key order byte-identical in both directions, but for the id the server is given', async () => {
    fs.rmSync(record, { force: true });
    const s = new RawSession(home, 'raw');
    // ping: the one request relayed before a handshake (src/proxy/client-methods.ts).
    const request = Buffer.from('{"params":{"b":1,"a":[1.50,2e3]},"id":9007199254740993,"method":"ping","jsonrpc":"2.0"}\n');
    const stringId = Buffer.from('{"jsonrpc":"2.0","id":"\\u0041-12345678901234567890","method":"ping"}\r\n');
    s.send(Buffer.concat([request.subarray(0, 10)]));
    s.send(Buffer.concat([request.subarray(10), stringId]));
    await s.until(() => s.lines().length >= 2, 'two responses');
    const lines = s.lines();
    expect(lines[0]?.toString()).toBe('{"result":{},"id":9007199254740993,"jsonrpc":"2.0"}\r\n');
    expect(lines[1]?.toString()).toBe('{"result":{},"id":"\\u0041-12345678901234567890","jsonrpc":"2.0"}\r\n');
    s.close();
    expect((await s.exited).code).toBe(0);
    // The server sees the ids of its one sequence (docs/adr/0012) and every other byte as the client sent it.
    const asSent = (line: Buffer, id: string, serverId: number): string => line.toString().replace(`"id":${id}`, `"id":${serverId}`);
    expect(fs.readFileSync(record, 'utf8')).toBe(asSent(request, '9007199254740993', 0) + asSent(stringId, '"\\u0041-12345678901234567890"', 1));
  });

  it('delivers a tool result with unusual key order, number lexemes and escapes byte-identical, under a big id', async () => {
    const s = new RawSession(home, 'raw');
    s.send(INITIALIZE + '\n');
    expect((await s.message(1)).result).toBeDefined();
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n{"jsonrpc":"2.0","id":9007199254740995,"method":"tools/call","params":{"name":"echo","arguments":{}}}\n');
    await s.until(() => s.lines().length >= 2, 'the call answered');
    expect(s.lines()[1]?.toString()).toBe('{"result":{"zeta":1,"alpha":[9007199254740993,1.0e2,-0.0],"\\u00e9":"\\ud83d\\ude00"},"id":9007199254740995,"jsonrpc":"2.0"}\r\n');
    s.close();
    expect((await s.exited).code).toBe(0);
  });

  it('does not forward log noise on the server stdout, and reports it on stderr and in the audit log', async () => {
    const s = new RawSession(home, 'noisy');
    s.send(INITIALIZE + '\n');
    const first = await s.message(1);
    expect(first.id).toBe(1);
    s.send('{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n');
    const second = await s.message(2);
    expect(second.id).toBe(2);
    s.close();
    await s.exited;
    expect(s.lines()).toHaveLength(2);
    expect(s.stderr).toContain('not a JSON-RPC message');
    expect(s.stderr).toContain('[info] server says hello on stdout');
    const exit = auditEvents(home).filter((e) => e.event === 'exit' && e.server === 'noisy').pop();
    // Noise before: the initialize result, the warden's own listing, its three session-start canary calls, the client's listing.
    expect(exit?.nonJsonLines).toBe(6);
  });

  it('closes the session when the server sends a line over the cap, answering the waiting request', async () => {
    const s = new RawSession(home, 'noisy');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    s.send('{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"flood","arguments":{"bytes":5000000}}}\n');
    const answer = await s.message(2);
    expect(answer.id).toBe('big');
    expect((answer.error as { message: string }).message).toMatch(/over the 4194304-byte cap/);
    expect((await s.exited).code).toBe(3);
    const exit = auditEvents(home).filter((e) => e.event === 'exit' && e.server === 'noisy').pop();
    expect(exit).toMatchObject({ cause: 'protocol_error', oversizeLines: 1, groupGone: true });
  });

  it('answers a client line with duplicate keys with an error and never forwards it', async () => {
    fs.rmSync(record, { force: true });
    const s = new RawSession(home, 'raw');
    s.send('{"jsonrpc":"2.0","id":1,"method":"custom/echo","method":"tools/call"}\n');
    const answer = await s.message(1);
    expect(answer).toMatchObject({ id: null, error: { code: -32600 } });
    expect((answer.error as { message: string }).message).toContain('duplicate key "method"');
    s.send('not json at all\n');
    expect(await s.message(2)).toMatchObject({ id: null, error: { code: -32700 } });
    s.send('{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
    expect(await s.message(3)).toMatchObject({ id: 3 });
    s.close();
    await s.exited;
    expect(fs.readFileSync(record, 'utf8')).toBe('{"jsonrpc":"2.0","id":0,"method":"ping"}\n'); // the first request it was given
  });

  it("passes the server stderr through, each line behind the server's name", async () => {
    const s = new RawSession(home, 'basic');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    s.close();
    expect((await s.exited).code).toBe(0);
    expect(s.stderr).toMatch(/^\[server basic\] basic: ready$/m); // escaped, behind the server's name (ADR 0039)
  });
});
