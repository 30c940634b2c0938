import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/protocol/json/canonical.js';
import { readJson } from '../../src/protocol/json/reader.js';

const canon = (text: string, mode: 'jcs' | 'exact' = 'jcs'): string => canonicalize(readJson(text), mode);

describe('RFC 8785 canonical form', () => {
  it('matches the RFC number vectors', () => {
    expect(canon('[333333333.33333329, 1E30, 4.50, 2e-3, 0.000001, 1e-7, -0, 100]')).toBe('[333333333.3333333,1e+30,4.5,0.002,0.000001,1e-7,0,100]');
  });

  it('sorts members by UTF-16 code units and escapes strings as RFC 8785 does', () => {
    expect(canon('{"\\u20ac":1,"\\r":2,"\\ud83d\\ude00":3,"1":4,"\\u0080":5,"\\u00f6":6}')).toBe('{"\\r":2,"1":4,"\u0080":5,"ö":6,"€":1,"😀":3}');
    expect(canon('"\\u001f\\/\\t"')).toBe('"\\u001f/\\t"');
  });

  it('collapses integers beyond 2^53 in jcs mode, and keeps their digits in exact mode', () => {
    expect(canon('{"max":9007199254740993}')).toBe(canon('{"max":9007199254740992}'));
    expect(canon('{"max":9007199254740993}', 'exact')).toBe('{"max":9007199254740993e0}');
    expect(canon('{"max":9007199254740992}', 'exact')).toBe('{"max":9007199254740992}');
    expect(canon('[1.0e2, 0.10, 5]', 'exact')).toBe('[100,0.1,5]');
  });

  it('refuses a number outside the double range', () => {
    expect(() => canon('[1e400]')).toThrow(/outside the IEEE-754 double range/);
  });

  const json = fc.jsonValue({ maxDepth: 4 });

  it('is idempotent: canonical(parse(canonical(x))) == canonical(x)', () => {
    fc.assert(
      fc.property(json, (v) => {
        const once = canon(JSON.stringify(v));
        expect(canon(once)).toBe(once);
        expect(canon(once, 'exact')).toBe(canon(JSON.stringify(v), 'exact'));
      }),
      { numRuns: 300 },
    );
  });

  it('never changes with key order or whitespace', () => {
    fc.assert(
      fc.property(json, fc.nat(), (v, seed) => {
        const shuffle = (x: unknown): unknown => {
          if (Array.isArray(x)) return x.map(shuffle);
          if (x && typeof x === 'object') {
            const entries = Object.entries(x as Record<string, unknown>);
            const rotated = entries.slice(seed % (entries.length || 1)).concat(entries.slice(0, seed % (entries.length || 1)));
            return Object.fromEntries(rotated.map(([k, y]) => [k, shuffle(y)]));
          }
          return x;
        };
        expect(canon(JSON.stringify(shuffle(v), null, (seed % 3) + 1))).toBe(canon(JSON.stringify(v)));
      }),
      { numRuns: 300 },
    );
  });

  it('agrees with JSON.stringify on plain safe values', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string())), (arr) => {
        expect(canon(JSON.stringify(arr))).toBe(JSON.stringify(arr.map((x) => (Object.is(x, -0) ? 0 : x))));
      }),
    );
  });
});
