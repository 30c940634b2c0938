import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { joinLine, writeLine, type Line } from '../../src/protocol/line.js';
import { classify, SPLICE_FROM } from '../../src/protocol/message.js';
import { DEFAULT_CHANNEL_LIMITS, ServerChannel, type ClientRequestMessage } from '../../src/proxy/channel.js';

// The matcher: an answer reaches the client only when its id is, lexeme for lexeme, the id the server was
// given for one waiting request; the client then gets its own id back byte for byte.

function harness() {
  const serverIn = new PassThrough();
  const serverOut = new PassThrough();
  const sent: Buffer[] = [];
  serverIn.on('data', (d: Buffer) => sent.push(d));
  const answers: Buffer[] = [];
  const lines: Line[] = [];
  const refused: string[] = [];
  const channel = new ServerChannel(serverIn, serverOut, DEFAULT_CHANNEL_LIMITS, {
    message() {},
    answer: (_r, _m, bytes) => {
      lines.push(bytes);
      answers.push(joinLine(bytes));
    },
    refused: (reason) => refused.push(reason),
    noise() {},
    inadmissible() {},
    oversize() {},
    unverified() {},
    end() {},
  });
  /** Feeds one line from the server and lets the stream deliver it. */
  const fromServer = async (line: string): Promise<void> => {
    serverOut.write(line);
    await new Promise((r) => setImmediate(r));
  };
  const forward = (line: string): { serverId: string; bytes: Buffer } => {
    const bytes = Buffer.from(line);
    const msg = classify(bytes, DEFAULT_CHANNEL_LIMITS.json) as ClientRequestMessage;
    expect(msg.kind).toBe('request');
    const f = channel.forward(msg, bytes);
    return { serverId: f.request.serverId, bytes: joinLine(f.bytes) };
  };
  return { channel, sent, answers, lines, refused, fromServer, forward };
}

/** JSON texts of ids a client may use: integers of any size, decimals, exponents, strings with escapes. */
const clientId = fc.oneof(
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.string({ unit: 'binary' }).map((s) => JSON.stringify(s)),
  fc.string().map((s) => `"${[...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`),
  fc.constant('null'),
);

/** Texts that denote the same number k as another JSON value, or wrap the right answer in a batch. */
const forgeriesOf = (k: number): fc.Arbitrary<string> =>
  fc.constantFrom(`${k}.0`, `${k}e0`, `${k}E+0`, `${k}0e-1`, `${k}.000`, `"${k}"`, `" ${k}"`, `${k + 21}`, `-${k}`, `${k}.0000000000000001`, `${k}.5`, `0${k}`, 'null');

describe('the id matcher', () => {
  it('gives every client id back byte for byte, and the server only the ids of one sequence', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(clientId, { minLength: 1, maxLength: 8 }), async (ids) => {
        const h = harness();
        const forwarded = ids.map((id) => h.forward(`{"jsonrpc":"2.0","id":${id},"method":"x","params":{"k":"é"}}\n`));
        expect(forwarded.map((f) => f.serverId)).toEqual(ids.map((_, i) => String(i)));
        for (const [i, f] of forwarded.entries()) expect(f.bytes.toString()).toBe(`{"jsonrpc":"2.0","id":${i},"method":"x","params":{"k":"é"}}\n`);
        // Answers in reverse order, each with an unusual layout that must survive.
        for (const f of [...forwarded].reverse()) await h.fromServer(`{"result":{"n":1.50} , "id" : ${f.serverId},"jsonrpc":"2.0"}\r\n`);
        expect(h.answers.map((b) => b.toString())).toEqual([...ids].reverse().map((id) => `{"result":{"n":1.50} , "id" : ${id},"jsonrpc":"2.0"}\r\n`));
        expect(h.refused).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses any other form of a waiting id, then still delivers the true answer once', async () => {
    const k = fc.integer({ min: 0, max: 20 });
    await fc.assert(
      fc.asyncProperty(k.chain((n) => fc.tuple(fc.constant(n), fc.array(forgeriesOf(n), { maxLength: 6 }))), async ([n, forgeries]) => {
        const h = harness();
        for (let i = 0; i <= n; i++) h.forward(`{"jsonrpc":"2.0","id":"c${i}","method":"tools/list"}\n`);
        for (const forged of forgeries) await h.fromServer(`{"jsonrpc":"2.0","id":${forged},"result":{"tools":[]}}\n`);
        await h.fromServer(`[{"jsonrpc":"2.0","id":${n},"result":{"tools":[]}}]\n`);
        expect(h.answers).toEqual([]);
        await h.fromServer(`{"jsonrpc":"2.0","id":${n},"result":{"tools":[]}}\n`);
        await h.fromServer(`{"jsonrpc":"2.0","id":${n},"result":{"tools":[]}}\n`); // a second answer
        expect(h.answers.map((b) => b.toString())).toEqual([`{"jsonrpc":"2.0","id":"c${n}","result":{"tools":[]}}\n`]);
        expect(h.refused).toContain('batch');
        expect(h.refused.at(-1)).toBe('unmatched_id');
        expect(h.channel.clientRequestsWaiting().map((r) => r.clientId)).not.toContain(`"c${n}"`);
      }),
      { numRuns: 200 },
    );
  });

  it("numbers the warden's own requests in the same sequence as the client's, in the client's form", async () => {
    const h = harness();
    h.forward('{"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a","version":"1"}},"jsonrpc":"2.0","id":0}\n');
    const own = h.channel.requestMessage('tools/list', undefined);
    const client = h.forward('{"method":"tools/list","jsonrpc":"2.0","id":1}\n');
    await new Promise((r) => setImmediate(r));
    // The channel writes only the warden's own request (the session writes the client's bytes it returns).
    expect(Buffer.concat(h.sent).toString()).toBe('{"method":"tools/list","jsonrpc":"2.0","id":1}\n');
    expect(client.bytes.toString()).toBe('{"method":"tools/list","jsonrpc":"2.0","id":2}\n');
    await h.fromServer('{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n');
    expect((await own).get('result')).toBeInstanceOf(Map);
    expect(h.answers).toEqual([]);
    await h.fromServer('{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}\n');
    expect(h.answers.map((b) => b.toString())).toEqual(['{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n']);
  });

  it('gives a long answer the client id in pieces that share its bytes, written as the one line', async () => {
    const h = harness();
    const id = '"a \\u00e9 long client id"';
    h.forward(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"bulk"}}\n`);
    const text = 'x'.repeat(SPLICE_FROM);
    // The id first (as this line), then last (as the TypeScript SDK writes its results).
    await h.fromServer(`{"jsonrpc":"2.0","id":0,"result":{"content":[{"type":"text","text":"${text}"}]}}\n`);
    h.forward(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"bulk"}}\n`);
    await h.fromServer(`{"result":{"content":[{"type":"text","text":"${text}"}]},"jsonrpc":"2.0","id":1}\n`);
    const want = [
      `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"${text}"}]}}\n`,
      `{"result":{"content":[{"type":"text","text":"${text}"}]},"jsonrpc":"2.0","id":${id}}\n`,
    ];
    expect(h.answers.map((b) => b.toString())).toEqual(want);
    expect(h.lines.every((l) => Array.isArray(l) && l.length === 3)).toBe(true);
    for (const [i, line] of h.lines.entries()) {
      const out = new PassThrough();
      const got: Buffer[] = [];
      out.on('data', (d: Buffer) => got.push(d));
      writeLine(out, line);
      await new Promise((r) => setImmediate(r));
      expect(Buffer.concat(got).toString()).toBe(want[i]);
    }
  });
});
