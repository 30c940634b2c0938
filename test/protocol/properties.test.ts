import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineFramer } from '../../src/protocol/framing.js';
import { CanonicalError, canonicalize, canonicalizeBoth } from '../../src/protocol/json/canonical.js';
import { JsonNumber, JsonReadError, readJson, toPlain, type JsonValue, type ReadCapture, type ReadLimits } from '../../src/protocol/json/reader.js';
import { serialize } from '../../src/protocol/json/write.js';

// Properties of the three pieces every received byte goes through: the framer, the lossless reader and the
// canonicalizer. Each property is checked against an independent oracle (a model of framing, JSON.parse,
// RFC 8259's grammar), and none may throw anything but the warden's own errors, in bounded time, however
// adversarial the input. numRuns are tuned so the file runs in a few seconds.

const RUNS = 200;

/** What readJson did: the value, or the kind of JsonReadError. Anything else thrown fails the property. */
function read(input: string | Uint8Array, limits?: ReadLimits): { ok: true; value: JsonValue } | { ok: false; kind: string } {
  try {
    return { ok: true, value: readJson(input, limits) };
  } catch (err) {
    if (!(err instanceof JsonReadError)) throw new Error(`readJson threw ${String(err)}, not a JsonReadError`);
    return { ok: false, kind: err.kind };
  }
}

function parse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** Milliseconds `f` took. The bounds below are generous (a shared 2-core machine): they catch quadratic, not slow. */
function timed(f: () => void): number {
  const t = performance.now();
  f();
  return performance.now() - t;
}

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when some string in the parsed value (key or value) holds a lone surrogate. */
function hasLoneSurrogate(v: unknown): boolean {
  if (typeof v === 'string') return LONE.test(v);
  if (Array.isArray(v)) return v.some(hasLoneSurrogate);
  if (v && typeof v === 'object') return Object.entries(v).some(([k, x]) => LONE.test(k) || hasLoneSurrogate(x));
  return false;
}

/** Deepest nesting of arrays and objects in a parsed value. */
function depthOf(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf));
  if (v && typeof v === 'object') return 1 + Math.max(0, ...Object.values(v).map(depthOf));
  return 0;
}

// ---------------------------------------------------------------------------------------------------------------

describe('the framer (property)', () => {
  type Event = { line: string } | { oversize: true };

  /** The framer, fed `bytes` cut at `cuts`. */
  function frame(bytes: Buffer, cuts: number[], max: number): { events: Event[]; rest: string | undefined } {
    const events: Event[] = [];
    const f = new LineFramer(max, { line: (b) => events.push({ line: b.toString('latin1') }), oversize: () => events.push({ oversize: true }) });
    let at = 0;
    for (const c of [...new Set(cuts.map((x) => x % (bytes.length + 1)))].sort((a, b) => a - b)) {
      f.push(bytes.subarray(at, c));
      at = c;
    }
    f.push(bytes.subarray(at));
    return { events, rest: f.rest()?.toString('latin1') };
  }

  /** The model: split on 0x0A; a line whose content exceeds `max` bytes is one oversize event, else delivered with its newline. */
  function model(bytes: Buffer, max: number): { events: Event[]; rest: string | undefined } {
    const parts = bytes.toString('latin1').split('\n');
    const last = parts.pop() as string;
    const events: Event[] = parts.map((p) => (p.length > max ? { oversize: true } : { line: `${p}\n` }));
    if (last.length > max) events.push({ oversize: true });
    return { events, rest: last.length > 0 && last.length <= max ? last : undefined };
  }

  // Bytes from a small alphabet so newlines, bare CRs and multibyte UTF-8 pieces are frequent.
  const bytes = fc.array(fc.constantFrom(0x0a, 0x0d, 0x61, 0x7b, 0x22, 0xc3, 0xa9, 0xf0, 0x00), { maxLength: 120 }).map((a) => Buffer.from(a));
  const cuts = fc.array(fc.nat(), { maxLength: 12 });

  it('delivers what the model says, whatever the chunking: each line within the cap byte for byte, each line over it as one oversize event', () => {
    fc.assert(
      fc.property(bytes, cuts, fc.integer({ min: 0, max: 24 }), (b, c, max) => {
        expect(frame(b, c, max)).toEqual(model(b, max));
      }),
      { numRuns: 500 },
    );
  });

  it('round-trips a stream of lines within the cap: the lines and the rest concatenate to the input', () => {
    fc.assert(
      fc.property(bytes, cuts, (b, c) => {
        const { events, rest } = frame(b, c, b.length);
        const out = events.map((e) => ('line' in e ? e.line : '<oversize>')).join('') + (rest ?? '');
        expect(out).toBe(b.toString('latin1'));
      }),
      { numRuns: RUNS },
    );
  });

  it('takes bounded time and memory on a long line in one-byte chunks, and on many newlines', () => {
    const one = Buffer.from('x');
    const f = new LineFramer(64 * 1024, { line: () => {}, oversize: () => {} });
    // 200,000 one-byte pushes of a line over the cap: discarded as it comes, never concatenated.
    expect(timed(() => {
      for (let i = 0; i < 200_000; i++) f.push(one);
      f.push(Buffer.from('\n'));
    })).toBeLessThan(2000);
    let lines = 0;
    const g = new LineFramer(16, { line: () => lines++, oversize: () => {} });
    expect(timed(() => g.push(Buffer.alloc(1_000_000, 0x0a)))).toBeLessThan(2000);
    expect(lines).toBe(1_000_000);
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('the lossless reader (property)', () => {
  const jsonValue = fc.jsonValue({ maxDepth: 5 });

  it('round-trips compact JSON byte for byte: serialize(readJson(text)) is text, from a string or from its UTF-8 bytes', () => {
    fc.assert(
      fc.property(jsonValue, (v) => {
        const text = JSON.stringify(v);
        const fromString = read(text);
        const fromBytes = read(Buffer.from(text, 'utf8'));
        expect(fromString.ok && serialize(fromString.value)).toBe(text);
        expect(fromBytes.ok && serialize(fromBytes.value)).toBe(text);
      }),
      { numRuns: RUNS },
    );
  });

  it('reads what JSON.parse reads, on indented text too (numbers as doubles)', () => {
    fc.assert(
      fc.property(jsonValue, fc.constantFrom(0, 1, 2, '\t', '\r\n '), (v, indent) => {
        const text = JSON.stringify(v, null, indent as string | number);
        const r = read(text);
        expect(r.ok).toBe(true);
        if (r.ok) expect(toPlain(r.value)).toEqual(JSON.parse(text));
      }),
      { numRuns: RUNS },
    );
  });

  it('locates the top-level "id" exactly, in bytes, whatever precedes it', () => {
    const id = fc.oneof(fc.integer(), fc.string({ unit: 'grapheme' }), fc.constant('9007199254740993'));
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'grapheme' }), jsonValue, { maxKeys: 4 }), id, fc.boolean(), (others, idValue, raw) => {
        delete (others as Record<string, unknown>).id;
        const idText = raw && /^[0-9]+$/.test(String(idValue)) ? String(idValue) : JSON.stringify(idValue);
        const text = `{${Object.entries(others).map(([k, x]) => `${JSON.stringify(k)}:${JSON.stringify(x)}`).concat(`"id":${idText}`).join(',')}}`;
        const bytes = Buffer.from(text, 'utf8');
        const capture: ReadCapture = {};
        readJson(bytes, undefined, capture);
        const [s, e] = capture.idSpan as [number, number];
        expect(bytes.subarray(s, e).toString('utf8')).toBe(idText);
      }),
      { numRuns: RUNS },
    );
  });

  // Valid JSON with one edit at a random place, from an alphabet of the characters that matter to the grammar.
  const edit = fc.constantFrom('0', '1', '-', '+', '.', 'e', 'E', ',', ':', '[', ']', '{', '}', '"', '\\', 'u', 'd800', '\\ud800', '\\udc00', '\\u00', 'x', ' ', '\t', '\r', '\n', '\u0001', '\u007f', '\ud800', '\ufeff', 'true', 'nul', '');
  const mutated = fc.tuple(fc.json({ maxDepth: 4 }), fc.nat(), fc.nat(3), edit).map(([text, at, del, ins]) => {
    const i = at % (text.length + 1);
    return text.slice(0, i) + ins + text.slice(i + del);
  });

  it('agrees with JSON.parse on near-valid text: accepts only what it accepts, with the same value, and refuses beyond it only by its own rules', () => {
    fc.assert(
      fc.property(mutated, (text) => {
        const r = read(text);
        const p = parse(text);
        if (r.ok) {
          expect(p.ok).toBe(true);
          if (p.ok) expect(toPlain(r.value)).toEqual(p.value);
        } else if (p.ok) {
          // JSON.parse is laxer in exactly three ways: duplicate keys, lone surrogates, depth.
          expect(['duplicate_key', 'lone_surrogate', 'too_deep']).toContain(r.kind);
          if (r.kind === 'lone_surrogate') expect(hasLoneSurrogate(p.value)).toBe(true);
          if (r.kind === 'too_deep') expect(depthOf(p.value)).toBeGreaterThan(64);
        } else {
          // Both refuse; the reader may name its own rule when it met it first ("\\ud800" before a syntax error).
          expect(['syntax', 'duplicate_key', 'lone_surrogate', 'too_deep']).toContain(r.kind);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses what RFC 8259 refuses', () => {
    const syntax = (text: string): void => {
      const r = read(text);
      expect(r.ok ? 'accepted' : r.kind, JSON.stringify(text)).toBe('syntax');
    };
    const digits = fc.stringMatching(/^[0-9]{1,6}$/);
    // Leading zeros, in any position a number can take.
    fc.assert(fc.property(digits, fc.constantFrom('', '-'), fc.constantFrom('%', '[%]', '{"a":%}', '[1,%,2]'), (d, sign, at) => syntax(at.replace('%', `${sign}0${d}`))), { numRuns: RUNS });
    // Trailing commas in arrays and objects, and empty members.
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom('[%,]', '{"k":%,}', '[%,,1]', '[,%]', '{,"k":%}'), (v, at) => syntax(at.replace('%', JSON.stringify(v)))),
      { numRuns: RUNS },
    );
    // An unescaped control character inside a string.
    fc.assert(fc.property(fc.string(), fc.integer({ min: 0, max: 0x1f }), fc.string(), (a, c, b) => syntax(`${JSON.stringify(a).slice(0, -1)}${String.fromCharCode(c)}${JSON.stringify(b).slice(1)}`)), { numRuns: RUNS });
    // Escapes outside the eight of §7 and \uXXXX.
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 1 }).filter((c) => !'"\\/bfnrtu'.includes(c)), (c) => syntax(`"a\\${c}"`)),
      { numRuns: RUNS },
    );
    fc.assert(fc.property(fc.stringMatching(/^[0-9a-fA-F]{0,3}$/), fc.constantFrom('', 'g', 'G', 'z', '"', ' '), (h, t) => syntax(`"\\u${h}${t}"`)), { numRuns: RUNS });
    // Number forms JavaScript has and JSON has not.
    for (const n of ['.5', '1.', '1.e3', '1e', '1e+', '-', '--1', '+1', '0x10', '0b1', '1_000', 'NaN', 'Infinity', '-Infinity', '01.5', '1.5.2', '1e5.5', '０']) syntax(n);
    // Literals are case-sensitive and whole; whitespace is only space, tab, CR, LF.
    for (const t of ['True', 'NULL', 'nul', 'truee', 'undefined', "'a'", '\u00a0[]', '[]\u2028', '\u000b1', '\f1', '/*c*/1', '[1]//']) syntax(t);
  });

  it('refuses lone surrogates, escaped or raw, and invalid UTF-8', () => {
    const lone = fc.oneof(fc.integer({ min: 0xd800, max: 0xdbff }), fc.integer({ min: 0xdc00, max: 0xdfff }));
    fc.assert(
      fc.property(lone, fc.string(), fc.boolean(), (c, tail, escaped) => {
        // A high surrogate followed by ASCII (never its low half), or a low one on its own.
        const unit = escaped ? `\\u${c.toString(16)}` : String.fromCharCode(c);
        const r = read(`"${unit}${JSON.stringify(tail).slice(1, -1)}"`);
        expect(r.ok ? 'accepted' : r.kind).toBe('lone_surrogate');
      }),
      { numRuns: RUNS },
    );
    // The UTF-8 encoder's view of a lone surrogate (CESU/WTF-8 bytes ED A0 80) is not UTF-8.
    expect(read(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]))).toEqual({ ok: false, kind: 'invalid_utf8' });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (b) => {
        let valid = true;
        try {
          new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(b);
        } catch {
          valid = false;
        }
        const r = read(b);
        if (!valid) expect(r).toEqual({ ok: false, kind: 'invalid_utf8' });
        else expect(r.ok ? 'ok' : r.kind).not.toBe('invalid_utf8');
      }),
      { numRuns: RUNS },
    );
  });

  it('throws nothing but JsonReadError, on any string, any bytes, any limits', () => {
    const limits = fc.record({ maxBytes: fc.nat(200), maxDepth: fc.nat(70) });
    fc.assert(fc.property(fc.string({ unit: 'binary' }), limits, (s, l) => void read(s, l)), { numRuns: RUNS });
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), limits, (b, l) => void read(b, l)), { numRuns: RUNS });
    fc.assert(fc.property(mutated, limits, (s, l) => void read(s, l)), { numRuns: RUNS });
  });

  // Sizes of about a megabyte: a quadratic step would take minutes there, a linear one well under the bounds.
  it('takes bounded time on adversarial depth and width', () => {
    const members = (n: number): string => Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',');
    const cases: [string, string, string][] = [
      ['100,000 [', '['.repeat(100_000), 'too_deep'],
      ['100,000 {"a":', '{"a":'.repeat(100_000), 'too_deep'],
      ['[ and { alternating', '[{"a":'.repeat(50_000), 'too_deep'],
      ['a 500,000-element array', `[${'0,'.repeat(500_000)}0]`, 'ok'],
      ['a 100,000-member object', `{${members(100_000)}}`, 'ok'],
      ['100,000 members, the last a duplicate', `{${members(100_000)},"k0":0}`, 'duplicate_key'],
      ['a string of 200,000 \\u escapes', `"${'\\u00e9'.repeat(200_000)}"`, 'ok'],
      ['a string of 100,000 surrogate pairs', `"${'\\ud83d\\ude00'.repeat(100_000)}"`, 'ok'],
      ['a number of 1,000,000 digits', `1${'0'.repeat(1_000_000)}`, 'ok'],
      ['an unterminated 1 MiB string', `["${'x\\n'.repeat(350_000)}`, 'syntax'],
      ['1 MiB of newlines then an error', `${'\n'.repeat(1024 * 1024)}x`, 'syntax'],
    ];
    for (const [what, text, kind] of cases) {
      let r: ReturnType<typeof read> | undefined;
      const ms = timed(() => (r = read(text, { maxBytes: 16 * 1024 * 1024, maxDepth: 128 })));
      expect(r?.ok ? 'ok' : (r as { kind: string }).kind, what).toBe(kind);
      expect(ms, what).toBeLessThan(2000);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('the canonicalizer (property)', () => {
  const canon = (text: string, mode: 'jcs' | 'exact' = 'jcs'): string => canonicalize(readJson(text, { maxBytes: 16 * 1024 * 1024, maxDepth: 128 }), mode);

  // Any lexeme RFC 8259 admits, including exponents far beyond what a double holds.
  const lexeme = fc
    .tuple(
      fc.constantFrom('', '-'),
      fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9][0-9]{0,25}$/)),
      fc.oneof(fc.constant(''), fc.stringMatching(/^\.[0-9]{1,25}$/)),
      fc.oneof(fc.constant(''), fc.stringMatching(/^[eE][+-]?[0-9]{1,3}$/), fc.stringMatching(/^[eE]-?[0-9]{15,400}$/)),
    )
    .map((parts) => parts.join(''));

  /** A lexeme's exact value as (sign, digits without leading or trailing zeros, exponent as BigInt). */
  function exactValue(l: string): string {
    const m = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(l) as RegExpExecArray;
    const all = ((m[2] as string) + (m[3] ?? '')).replace(/^0+/, '');
    if (all === '') return '0';
    const digits = all.replace(/0+$/, '');
    const exp = BigInt(m[4] ?? '0') - BigInt((m[3] ?? '').length) + BigInt(all.length - digits.length);
    return `${m[1]}${digits}e${exp}`;
  }

  it('produces text JSON.parse reads back to the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (v) => {
        const text = JSON.stringify(v);
        expect(JSON.parse(canon(text))).toEqual(JSON.parse(text));
      }),
      { numRuns: RUNS },
    );
  });

  it('writes every number as RFC 8785 does (ES6 shortest form), and in exact mode as a valid number lexeme that is its exact value', () => {
    fc.assert(
      fc.property(lexeme, (l) => {
        const d = Number(l);
        if (!Number.isFinite(d)) {
          expect(() => canon(l)).toThrow(CanonicalError);
          return;
        }
        expect(canon(l)).toBe(Object.is(d, -0) ? '0' : String(d));
        const exact = canon(l, 'exact');
        expect(read(exact).ok, exact).toBe(true);
        // The exact text denotes the very value of the lexeme, and reading it back changes nothing.
        expect(exactValue(exact)).toBe(exactValue(l));
        expect(canon(exact, 'exact')).toBe(exact);
        expect(canon(exact)).toBe(canon(l));
      }),
      { numRuns: 500 },
    );
  });

  it('gives two lexemes the same exact text exactly when they denote the same value', () => {
    fc.assert(
      fc.property(lexeme, lexeme, (a, b) => {
        if (!Number.isFinite(Number(a)) || !Number.isFinite(Number(b))) return;
        const same = exactValue(a) === exactValue(b);
        expect(canon(a, 'exact') === canon(b, 'exact')).toBe(same);
      }),
      { numRuns: RUNS },
    );
    // The same value written with its decimal point elsewhere.
    fc.assert(
      fc.property(fc.stringMatching(/^[1-9][0-9]{0,20}$/), fc.integer({ min: -400, max: 400 }), fc.nat(20), (digits, exp, shift) => {
        const a = `${digits}e${exp}`;
        const b = `${digits}${'0'.repeat(shift)}e${exp - shift}`;
        if (!Number.isFinite(Number(a))) return;
        expect(canon(b, 'exact')).toBe(canon(a, 'exact'));
      }),
      { numRuns: RUNS },
    );
  });

  it('keeps apart numbers whose exponents are beyond a double (1e-<400 digits> is not 1e-<other 400 digits>)', () => {
    const nines = '9'.repeat(400);
    expect(canon(`1e-${nines}`)).toBe('0');
    expect(canon(`1e-${nines}`, 'exact')).toBe(`1e-${nines}`);
    expect(canon(`1e-${nines}8`, 'exact')).not.toBe(canon(`1e-${nines}`, 'exact'));
    expect(canon(`10e-${nines}8`, 'exact')).toBe(`1e-${nines}7`);
    expect(canon(`0.5e-99999999999999999999`, 'exact')).toBe('5e-100000000000000000000');
    expect(canon(`1e-99999999999999999999`, 'exact')).toBe('1e-99999999999999999999');
  });

  it('canonicalizes both forms in one pass exactly as two calls do', () => {
    fc.assert(
      fc.property(fc.array(lexeme, { maxLength: 5 }), (ls) => {
        const text = `[${ls.join(',')}]`;
        if (ls.some((l) => !Number.isFinite(Number(l)))) return;
        expect(canonicalizeBoth(readJson(text))).toEqual({ jcs: canon(text), exact: canon(text, 'exact') });
      }),
      { numRuns: RUNS },
    );
  });

  it('throws nothing but CanonicalError, for any value the reader accepts', () => {
    fc.assert(
      fc.property(fc.oneof(lexeme.map((l) => `[${l}]`), fc.json({ maxDepth: 4 })), fc.constantFrom('jcs' as const, 'exact' as const), (text, mode) => {
        try {
          canon(text, mode);
        } catch (err) {
          expect(err).toBeInstanceOf(CanonicalError);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('takes bounded time on adversarial depth, width and number length', () => {
    const cases: [string, string][] = [
      ['nesting 128 deep', '['.repeat(128) + ']'.repeat(128)],
      ['a 50,000-member object in reverse order', `{${Array.from({ length: 50_000 }, (_, i) => `"k${String(50_000 - i).padStart(6, '0')}":${i}`).join(',')}}`],
      ['a 200,000-element array of inexact numbers', `[${'1.0,'.repeat(200_000)}1]`],
      // A message can hold megabytes of exponent digits: exponent arithmetic must stay linear (BigInt takes ~5 s here).
      ['a number with a 4 MiB exponent', `1e-${'9'.repeat(4 * 1024 * 1024)}`],
      ['a number with 1 MiB of digits', `0.${'3'.repeat(1024 * 1024)}`],
    ];
    for (const [what, text] of cases) {
      const value = readJson(text, { maxBytes: 16 * 1024 * 1024, maxDepth: 128 });
      expect(timed(() => canonicalizeBoth(value)), what).toBeLessThan(2000);
    }
  });
});

// The lexeme class the reader keeps: any of these survives to the canonicalizer untouched.
it('keeps every number lexeme as it arrived', () => {
  fc.assert(
    fc.property(fc.stringMatching(/^-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,30})?([eE][+-]?[0-9]{1,30})?$/), (l) => {
      const v = readJson(`[${l}]`) as JsonValue[];
      expect((v[0] as JsonNumber).lexeme).toBe(l);
    }),
    { numRuns: RUNS },
  );
});
