import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fillDeferred, JsonReadError, LONG_RUN, readJson, type JsonValue, type ReadCapture } from '../../src/protocol/json/reader.js';
import { serialize } from '../../src/protocol/json/write.js';
import { readText } from '../helpers/text-reader.js';
import { classify, DEFER_FROM } from '../../src/protocol/message.js';

// The byte reader (protocol/json/byte-reader.ts) walks the bytes; the text reader (test/helpers/text-reader.ts) is the old
// algorithm, unchanged. On every input, valid or not, the two must give the same value, the same id span and
// the same refusal at the same place, also where the byte reader works without a view of the whole input
// (inputs over LONG_RUN bytes, before their 65th string), and past that, with it. A read that defers long
// strings (classify of a long line) must give the same message once its value is used.

type Outcome = { value: string; id?: [number, number] } | { kind: string; message: string; offset: number; line: number; column: number };

function outcome(input: string | Uint8Array, capture: ReadCapture = {}): Outcome {
  try {
    const read = (typeof input === 'string' ? readText(input, { maxBytes: 1 << 22, maxDepth: 24 }, capture) : readJson(input, { maxBytes: 1 << 22, maxDepth: 24 }, capture));
    if (typeof input !== 'string') fillDeferred(capture, Buffer.from(input));
    const value = serialize(read);
    return capture.idSpan ? { value, id: capture.idSpan } : { value };
  } catch (err) {
    if (!(err instanceof JsonReadError)) throw err;
    return { kind: err.kind, message: err.message, offset: err.offset, line: err.line, column: err.column };
  }
}

/** Reading the bytes of `text` (with and without deferring) is reading the text it decodes to. */
function same(text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  const decoded = bytes.toString('utf8');
  const o = outcome(decoded);
  if ('id' in o && o.id) o.id = [Buffer.byteLength(decoded.slice(0, o.id[0])), Buffer.byteLength(decoded.slice(0, o.id[1]))];
  expect(outcome(bytes), JSON.stringify(decoded).slice(0, 300)).toEqual(o);
  expect(outcome(bytes, { defer: true })).toEqual(o);
}

const plain = 'abcdefghijklmnopqrstuvwxyz0123456789+/= ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const long = (n: number): string => plain.repeat(Math.ceil(n / plain.length)).slice(0, n);

/** Pieces that make texts valid or not: escapes, surrogates, multibyte characters, numbers, structure. */
const piece = fc.oneof(
  fc.integer({ min: 0, max: 0x20 }).map((c) => String.fromCharCode(c)), // every control character, and space
  fc.constantFrom(
    '"', '\\', '\\u', '\\ud83d', '\\ude00', '\\ud83d\\ude00', '\\n', '\\"', 'u00e9', '\n', ' ', ',', ':', '{', '}', '[', ']', 'é', '€', '😀',
    '\ufeff', '\u007f', '\u0080', 'a', '1', '-', '0', '.', 'e', 'E', '+', '-0.5e-7', '1E+2', '01', 'true', 'nul', '"id"', '"id":', 'tru',
  ),
);
const number = fc.oneof(
  fc.bigInt({ min: -(2n ** 90n), max: 2n ** 90n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.tuple(fc.integer(), fc.nat(999), fc.integer({ min: -400, max: 400 }), fc.constantFrom('e', 'E', 'e+', 'E-')).map(([i, f, e, x]) => `${i}.${f}${x}${Math.abs(e)}`),
);
const value: fc.Arbitrary<string> = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.array(number, { maxLength: 6 }).map((ns) => `[${ns.join(',')}]`),
  fc.string({ unit: 'binary' }).map((s) => JSON.stringify(s)),
  fc.nat(30).map((d) => '['.repeat(d) + '"x"' + ']'.repeat(d)),
);
/** A text, maybe with pieces inserted (most then refused). */
const edited = fc.tuple(value, fc.array(fc.tuple(fc.nat(), piece), { maxLength: 4 })).map(([t, edits]) => {
  let s = t;
  for (const [at, p] of edits) {
    const i = at % (s.length + 1);
    s = s.slice(0, i) + p + s.slice(i);
  }
  return s;
});

describe('the byte reader reads what the text reader reads', () => {
  it('on short inputs (a view made at once)', () => {
    fc.assert(fc.property(edited, same), { numRuns: 1500 });
  });

  it('on inputs over LONG_RUN bytes: with a long string, a long padding or many strings around the text', () => {
    const wrap = fc.oneof(
      fc.constant((t: string) => `{"result":{"text":"${long(LONG_RUN + 7)}","v":${t}},"id":1}`),
      fc.constant((t: string) => `${' '.repeat(LONG_RUN + 1)}${t}`),
      fc.constant((t: string) => `{"a":${t},"b":${JSON.stringify(Array.from({ length: 90 }, (_, i) => `s${i}`.repeat(20)))},"c":${t}}`),
      fc.constant((t: string) => `[${JSON.stringify(long(LONG_RUN * 2))},${t},${JSON.stringify(long(LONG_RUN + 1))}]`),
      fc.constant((t: string) => `{"jsonrpc":"2.0","id":${t},"result":{"content":[{"type":"text","text":"${long(LONG_RUN)}é${long(LONG_RUN)}"}]}}`),
    );
    fc.assert(fc.property(edited, wrap, (t, w) => same(w(t))), { numRuns: 1000 });
  });

  it('on long strings with escapes, surrogates and control characters anywhere', () => {
    const special = fc.constantFrom('\u0000', '\u001f', ' ', '\t', '"', '\\"', '\\\\', '\\n', '\\u0041', '\\udc00', '\\ud83d\\ude00', '\\q', 'é', '😀', '\u007f', '\u0080');
    fc.assert(
      fc.property(fc.integer({ min: LONG_RUN - 8, max: LONG_RUN + 600 }), fc.array(fc.tuple(fc.nat(), special), { maxLength: 3 }), fc.nat(7), fc.nat(3), (n, inserts, pad, depth) => {
        let body = long(n);
        for (const [at, s] of inserts) {
          const i = at % (body.length + 1);
          body = body.slice(0, i) + s + body.slice(i);
        }
        same(' '.repeat(pad) + '{"x":'.repeat(depth) + `{"id":"é","text":"${body}","n":-0.0e+00}` + '}'.repeat(depth));
      }),
      { numRuns: 400 },
    );
  });

  it('refuses nesting past the bound at the same place with and without a view', () => {
    for (const pad of [0, LONG_RUN + 1]) same(' '.repeat(pad) + '['.repeat(25) + ']'.repeat(25));
  });
});

describe('deferred strings (classify of a long line)', () => {
  const text = long(DEFER_FROM);
  const line = Buffer.from(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"${text}"}],"meta":{"note":"${text}"}}}\n`);

  it('are left out of the read, checked, and put in on the first use of the value', () => {
    const capture: ReadCapture = { defer: true };
    const v = readJson(line, undefined, capture) as Map<string, JsonValue>;
    expect(capture.deferred?.length).toBe(2);
    const meta = (v.get('result') as Map<string, JsonValue>).get('meta') as Map<string, JsonValue>;
    expect(meta.get('note')).toBe('');
    fillDeferred(capture, line);
    expect(meta.get('note')).toBe(text);
    expect(serialize(v)).toBe(serialize(readJson(line)));
  });

  it('never include a top-level member or a key', () => {
    const big = Buffer.from(`{"jsonrpc":"2.0","id":"${text}","method":"${text}","params":{"${text}":1}}`);
    const capture: ReadCapture = { defer: true };
    const v = readJson(big, undefined, capture) as Map<string, JsonValue>;
    expect(capture.deferred).toBeUndefined();
    expect(v.get('method')).toBe(text);
  });

  it('give classify the message of the line read whole, value first used at any time', () => {
    const msg = classify(line, { maxBytes: 1 << 22, maxDepth: 64 });
    expect(msg).toMatchObject({ kind: 'response', id: '7', idSpan: [22, 23] });
    if (msg.kind !== 'response') throw new Error(msg.kind);
    expect(serialize(msg.value)).toBe(serialize(readJson(line)));
    expect(serialize(msg.value)).toBe(line.toString().trimEnd());
  });

  it('classify a long line of any content as reading it whole does (property)', () => {
    fc.assert(
      fc.property(edited, fc.constantFrom('result', 'params', 'error'), (t, member) => {
        const l = Buffer.from(`{"jsonrpc":"2.0","id":3,${member === 'params' ? '"method":"m",' : ''}"${member}":{"a":${t},"text":"${text}","b":[${t}]}}`);
        let read = true;
        const whole = ((): string => {
          try {
            return serialize(readJson(l, { maxBytes: 1 << 22, maxDepth: 64 }));
          } catch (err) {
            read = false;
            return (err as Error).message;
          }
        })();
        const msg = classify(l, { maxBytes: 1 << 22, maxDepth: 64 });
        // A line read whole holds a raw carriage return only as whitespace, which classify refuses (ADR 0006).
        if (read && l.includes(0x0d)) expect(msg).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/^ambiguous: a carriage return/) });
        else if (msg.kind === 'invalid') expect(msg.reason).toContain(whole);
        else expect('value' in msg ? serialize(msg.value) : '').toBe(whole);
      }),
      { numRuns: 200 },
    );
  });
});
