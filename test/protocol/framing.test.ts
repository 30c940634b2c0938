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
