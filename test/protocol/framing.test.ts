import { describe, expect, it } from 'vitest';
import { LineFramer } from '../../src/protocol/framing.js';

function frame(chunks: (string | Buffer)[], max = 1024): { lines: string[]; oversize: number } {
  const lines: string[] = [];
  let oversize = 0;
  const f = new LineFramer(max, { line: (b) => lines.push(b.toString('latin1')), oversize: () => oversize++ });
  for (const c of chunks) f.push(Buffer.isBuffer(c) ? c : Buffer.from(c, 'latin1'));
  return { lines, oversize };
}

describe('framing on byte 0x0A', () => {
  it('splits on newline only, never on a bare carriage return', () => {
    expect(frame(['{"a":\r1}\r\n{"b":2}\n']).lines).toEqual(['{"a":\r1}\r\n', '{"b":2}\n']);
  });

  it('joins a line split across chunks, byte for byte', () => {
    expect(frame(['{"a"', ':1', '}\n{']).lines).toEqual(['{"a":1}\n']);
  });

  it('does not split a multibyte character cut between chunks', () => {
    const bytes = Buffer.from('"é"\n', 'utf8');
    const f = frame([bytes.subarray(0, 2), bytes.subarray(2)]);
    expect(Buffer.from(f.lines[0] as string, 'latin1').toString('utf8')).toBe('"é"\n');
  });

  it('reports a line over the cap once and delivers the next line intact', () => {
    const f = frame(['x'.repeat(600), 'x'.repeat(600), 'x\n{"ok":1}\n'], 1000);
    expect(f.oversize).toBe(1);
    expect(f.lines).toEqual(['{"ok":1}\n']);
  });

  it('reports an over-cap line that arrives in one chunk', () => {
    const f = frame(['y'.repeat(2000) + '\n{"ok":1}\n'], 1000);
    expect(f.oversize).toBe(1);
    expect(f.lines).toEqual(['{"ok":1}\n']);
  });

  it('accepts a line of exactly the cap plus its newline', () => {
    expect(frame(['z'.repeat(1000) + '\n'], 1000).lines).toHaveLength(1);
  });
});

describe('framing a line that arrives a byte at a time', () => {
  it('keeps it in a bounded number of buffers, and delivers it byte for byte', () => {
    const text = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'d'.repeat(300_000)}"}}`;
    const bytes = Buffer.from(text + '\n');
    const lines: Buffer[] = [];
    const f = new LineFramer(1 << 20, { line: (b) => lines.push(b), oversize: () => expect.fail('not over the cap') });
    let most = 0;
    for (let i = 0; i < bytes.length; i++) {
      f.push(Buffer.from(bytes.subarray(i, i + 1))); // a buffer of its own, as a read of one byte gives
      most = Math.max(most, f.piecesHeld);
    }
    expect(lines).toHaveLength(1);
    expect((lines[0] as Buffer).equals(bytes)).toBe(true);
    // One buffer per 16 KiB of small pieces, not one per byte (300,000 before).
    expect(most).toBeLessThan(bytes.length / 8192);
    expect(f.piecesHeld).toBe(0);
  });

  it('keeps the order of small and large pieces, and a final line without a newline', () => {
    const parts = ['{"a":', 'x'.repeat(5000), '"', 'y'.repeat(20_000), '"', 'z'.repeat(4095), '}\n', '{"b"', ':1}'];
    const framed: Buffer[] = [];
    const f = new LineFramer(1 << 20, { line: (b) => framed.push(b), oversize: () => expect.fail('not over the cap') });
    for (const p of parts) f.push(Buffer.from(p, 'latin1'));
    expect(framed.map((b) => b.toString('latin1'))).toEqual([parts.slice(0, 7).join('')]);
    expect(f.rest()?.toString('latin1')).toBe('{"b":1}');
  });
});
