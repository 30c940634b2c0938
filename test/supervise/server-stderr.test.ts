import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { SERVER_LINE_MAX, serverStderrRelay } from '../../dist/supervise/server-stderr.js';

// How `run` relays a server's stderr to its own (src/supervise/server-stderr.ts, ADR 0039): each line escaped and
// behind "[server ID] ", a long line cut and marked, the last partial line flushed, nothing lost.

/** What the relay of server `id` writes for the server's stderr given in these chunks. */
async function relayed(chunks: (string | Buffer)[], id = 'demo'): Promise<string> {
  const out: Buffer[] = [];
  const relay = Readable.from(chunks.map((c) => Buffer.from(c))).pipe(serverStderrRelay(id));
  for await (const b of relay) out.push(b as Buffer);
  return Buffer.concat(out).toString('utf8');
}

/** The server's text back from the relayed lines of `id` (the escapes left as they are). */
const unrelayed = (text: string, id = 'demo'): string =>
  text.split('\n').slice(0, -1).map((l) => (l.startsWith(`[server ${id}, cut] `) ? l.slice(`[server ${id}, cut] `.length) : `${l.slice(`[server ${id}] `.length)}\n`)).join('');

describe("the server's stderr as run relays it", () => {
  it('prefixes every line with the server, so none starts as a report of mcp-warden', async () => {
    const out = await relayed(["mcp-warden: server 'demo' verified\nplain\n"], 'mcp-warden');
    expect(out).toBe("[server mcp-warden] mcp-warden: server 'demo' verified\n[server mcp-warden] plain\n");
  });

  it('escapes terminal controls, bidi overrides and a bare CR, and ends a line at CRLF', async () => {
    const out = await relayed(['\u001b[1A\u001b[2Kup\r\n', 'title \u001b]0;T\u0007 \u202eevil\n', 'over\rwritten\n']);
    expect(out).toBe('[server demo] \\u001b[1A\\u001b[2Kup\n[server demo] title \\u001b]0;T\\u0007 \\u202eevil\n[server demo] over\\u000dwritten\n');
  });

  it('joins a line written in pieces and a character split between chunks', async () => {
    const e = Buffer.from('é');
    expect(await relayed(['hal', Buffer.concat([Buffer.from('f '), e.subarray(0, 1)]), Buffer.concat([e.subarray(1), Buffer.from('\nnext\n')])])).toBe('[server demo] half é\n[server demo] next\n');
  });

  it('flushes the last line at the end of the stream when it has no newline', async () => {
    expect(await relayed(['done\nno newline at end'])).toBe('[server demo] done\n[server demo] no newline at end\n');
  });

  it('cuts a line longer than the bound into marked pieces, losing nothing', async () => {
    const long = 'a'.repeat(SERVER_LINE_MAX * 2 + 5);
    const out = await relayed([long.slice(0, 1000), long.slice(1000), '\nafter\n']);
    const lines = out.split('\n');
    expect(lines.slice(0, 2).every((l) => l === `[server demo, cut] ${'a'.repeat(SERVER_LINE_MAX)}`)).toBe(true);
    expect(lines.slice(2)).toEqual(['[server demo] aaaaa', '[server demo] after', '']);
    expect(unrelayed(out)).toBe(`${long}\nafter\n`);
  });

  it('keeps a line of exactly the bound whole, its CRLF included, and never cuts a surrogate pair in two', async () => {
    expect(await relayed([`${'b'.repeat(SERVER_LINE_MAX)}\r\n`])).toBe(`[server demo] ${'b'.repeat(SERVER_LINE_MAX)}\n`);
    const pair = `${'c'.repeat(SERVER_LINE_MAX - 1)}😀tail`;
    const out = await relayed([pair]);
    expect(out).toBe(`[server demo, cut] ${'c'.repeat(SERVER_LINE_MAX - 1)}\n[server demo] 😀tail\n`);
  });

  it('holds no more than the bound of a line without newlines: of 1 MiB, all but the last 16 Ki come out before the end', async () => {
    const relay = serverStderrRelay('demo');
    const got: Buffer[] = [];
    relay.on('data', (b: Buffer) => got.push(b));
    for (let i = 0; i < 64; i++) relay.write('z'.repeat(16 * 1024));
    await new Promise((resolve) => setImmediate(resolve));
    const before = Buffer.concat(got).toString('utf8');
    expect(before.split('\n').slice(0, -1)).toEqual(Array.from({ length: 63 }, () => `[server demo, cut] ${'z'.repeat(SERVER_LINE_MAX)}`));
    const ended = new Promise((resolve) => relay.once('end', resolve));
    relay.end();
    await ended;
    expect(unrelayed(Buffer.concat(got).toString('utf8'))).toBe(`${'z'.repeat(1024 * 1024)}\n`);
  });
});
