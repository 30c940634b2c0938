import { describe, expect, it } from 'vitest';
import { serialize } from '../../src/protocol/json/write.js';
import { classify, withId } from '../../src/protocol/message.js';
import type { ResponseMessage, ServerMessage } from '../../src/proxy/channel.js';
import { ownBytes, waiting } from '../../src/proxy/waiting-message.js';

// A server message that waits keeps its bytes and envelope; its value is read again from the bytes on first use
// (test/attack10/held-memory shows what keeping the value cost).

const LIMITS = { maxBytes: 1 << 22, maxDepth: 64 };

describe('a waiting server message', () => {
  it('has the envelope and, on first use, the value it was classified with', () => {
    const bytes = Buffer.from('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":[1,2.50,{"a":"é"}]}}\n');
    const msg = classify(bytes, LIMITS) as ServerMessage;
    const w = waiting(msg, bytes, LIMITS);
    expect(w).toMatchObject({ kind: 'notification', method: 'notifications/message' });
    expect(serialize(w.value)).toBe(serialize(msg.value));
    expect(w.value).toBe(w.value); // read once
    expect(waiting(w, bytes, LIMITS)).toBe(w);
  });

  it('reads an answer from its bytes in pieces, the client id in them', () => {
    const text = 'x'.repeat(70_000);
    const bytes = Buffer.from(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"${text}"}]}}\n`);
    const msg = classify(bytes, LIMITS) as ResponseMessage;
    const pieces = withId(bytes, msg.idSpan, Buffer.from('"client-7"'));
    expect(Array.isArray(pieces)).toBe(true);
    const w = waiting(msg, pieces, LIMITS);
    expect(w).toMatchObject({ kind: 'response', id: '12', idSpan: msg.idSpan });
    const result = w.value.get('result') as Map<string, unknown>;
    expect(serialize(result as never)).toBe(serialize(msg.value.get('result') as never));
    expect(w.value.get('id')).toBe('client-7');
  });
});

describe('a waiting answer near the size bound', () => {
  it('is read again whole when the client id put back made it longer than the bound', () => {
    const limits = { maxBytes: 200, maxDepth: 64 };
    const bytes = Buffer.from(`{"jsonrpc":"2.0","id":5,"result":{"t":"${'x'.repeat(150)}"}}`);
    expect(bytes.length).toBeLessThanOrEqual(200);
    const msg = classify(bytes, limits) as ResponseMessage;
    const w = waiting(msg, withId(bytes, msg.idSpan, Buffer.from(JSON.stringify('c'.repeat(60)))), limits);
    expect(w.value.get('id')).toBe('c'.repeat(60));
  });
});

describe('the bytes a waiting message keeps', () => {
  it('are copied out of the read they arrived in, into a buffer of their own size', () => {
    const read = Buffer.alloc(65536, 0x20);
    const line = read.subarray(100, 190);
    const kept = ownBytes(line) as Buffer;
    expect(kept).not.toBe(line);
    expect(kept.equals(line)).toBe(true);
    expect(kept.buffer.byteLength).toBe(90);
  });

  it('are the line itself when it owns its buffer, and the pieces of a long answer as they are', () => {
    const line = Buffer.alloc(70_000, 0x20);
    expect(ownBytes(line)).toBe(line);
    const pieces = withId(Buffer.from(`{"jsonrpc":"2.0","id":5,"result":{"t":"${'x'.repeat(70_000)}"}}\n`), [22, 23], Buffer.from('"a-client-id"'));
    expect(ownBytes(pieces)).toBe(pieces);
    const pinned = [Buffer.alloc(65536).subarray(0, 10), Buffer.from('7'), Buffer.alloc(65536).subarray(0, 10)];
    expect((ownBytes(pinned) as Buffer).buffer.byteLength).toBe(21);
  });
});
