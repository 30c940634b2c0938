import { describe, expect, it } from 'vitest';
import { classify, DEFER_FROM } from '../../src/protocol/message.js';

// A bare carriage return is JSON whitespace, but a reader of universal newlines (python's text stdin, node's
// readline) ends a line there: one line to the warden would be several to such a peer (test/attack10/bare-cr).
// The only carriage return a line may hold is the one of a CRLF line end.

const LIMITS = { maxBytes: 1 << 22, maxDepth: 64 };
const call = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}';

describe('classify and carriage returns', () => {
  it('refuses a carriage return between tokens, answering the id it can read', () => {
    for (const line of [`${call},"pad":[\r{"id":"x"}\r]}\n`, `\r${call}}\n`, `${call}\r}\n`, `${call}}\r\r\n`, `${call}}\r \n`, `${call}}\r\n\r`]) {
      const msg = classify(Buffer.from(line), LIMITS);
      expect(msg, JSON.stringify(line)).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/^ambiguous: a carriage return/) });
    }
    expect(classify(Buffer.from(`${call},"pad":[\r1]}\n`), LIMITS)).toMatchObject({ kind: 'invalid', id: '7' });
  });

  it('takes a CRLF line end, and a carriage return as the last byte of a line without a newline', () => {
    expect(classify(Buffer.from(`${call}}\r\n`), LIMITS)).toMatchObject({ kind: 'request', id: '7' });
    expect(classify(Buffer.from(`${call}}\r`), LIMITS)).toMatchObject({ kind: 'request', id: '7' });
  });

  it('refuses one in a long line, whose long strings are checked in the bytes', () => {
    const text = 'a'.repeat(DEFER_FROM);
    const line = `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"${text}"}\r,{"type":"text","text":"${text}"}]}}\n`;
    expect(classify(Buffer.from(line), LIMITS)).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/^ambiguous: a carriage return/) });
    expect(classify(Buffer.from(line.replace('\r', ' ')), LIMITS)).toMatchObject({ kind: 'response', id: '3' });
  });

  it('a carriage return inside a string is not whitespace: refused as a control character, as before', () => {
    expect(classify(Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"t":"a\rb"}}\n`), LIMITS)).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/^syntax/) });
  });
});
