import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalBytes, canonicalize, fromPlain } from '../../src/protocol/json/canonical.js';
import { JsonNumber, readJson, type JsonValue } from '../../src/protocol/json/reader.js';
import { hashOf, tagged } from '../../src/surface/hash.js';

// The canonical form is written as UTF-8 by hand (canonical.ts): checked here against the text the warden
// used to build with JSON.stringify, on any string (astral characters, lone surrogates, controls), and
// against the digests of that text.

/** RFC 8785 text of plain data the way canonical.ts built it before it wrote bytes. */
function oracle(x: unknown): string {
  if (typeof x === 'string' || typeof x === 'boolean' || x === null) return JSON.stringify(x);
  if (typeof x === 'number') return JSON.stringify(Object.is(x, -0) ? 0 : x);
  if (Array.isArray(x)) return `[${x.map(oracle).join(',')}]`;
  const o = x as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${oracle(o[k])}`)
    .join(',')}}`;
}

const sha = (s: string): string => 'sha256:' + createHash('sha256').update(s, 'utf8').digest('hex');

describe('the canonical bytes', () => {
  const text = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary-ascii' }), fc.string({ unit: 'grapheme-ascii', minLength: 20, maxLength: 60 }), fc.string({ unit: 'binary-ascii', minLength: 20, maxLength: 60 }), fc.constantFrom('', '"', '\\', '\u2028', '\ud800', '\udc00x', '\ud83d\ude00', '\u007f\u0080\u07ff\u0800\uffff', 'a long ASCII string, long enough for the native copy', `a long one ending in a quote: ${'x'.repeat(30)}"`));
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      text,
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('v'), { maxLength: 5 }),
      fc.dictionary(text, tie('v'), { maxKeys: 20 }),
    ),
  })).v;

  it('are the UTF-8 of the text JSON.stringify builds, and hash as it does', () => {
    fc.assert(
      fc.property(value, (x) => {
        const v = fromPlain(x);
        const expected = oracle(x);
        expect(canonicalize(v)).toBe(expected);
        expect(Buffer.from(canonicalBytes(v, { mode: 'jcs', inexact: false })).equals(Buffer.from(expected, 'utf8'))).toBe(true);
        expect(hashOf(v)).toBe(sha(expected));
        expect(tagged(expected)).toBe(sha(expected));
      }),
      { numRuns: 1000 },
    );
  });

  it('grow past their buffer and keep what came before', () => {
    const big: JsonValue = ['é'.repeat(700_000), 'x'.repeat(3_000_000), new Map([['k', '😀'.repeat(100_000)]]), new JsonNumber('1')];
    const expected = JSON.stringify(['é'.repeat(700_000), 'x'.repeat(3_000_000), { k: '😀'.repeat(100_000) }, 1]);
    expect(canonicalize(big)).toBe(expected);
    expect(canonicalize(readJson('{"b":[1,"\\u0000"],"a":"z"}'))).toBe('{"a":"z","b":[1,"\\u0000"]}'); // after a grown buffer is dropped
  });
});
