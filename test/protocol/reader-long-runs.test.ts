import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonReadError, LONG_RUN, plainAscii, readJson } from '../../src/protocol/json/reader.js';
import { plainAsciiInJs } from '../../src/protocol/json/plain-run.js';
import { plainInWasm, simdScanAvailable } from '../../src/protocol/json/plain-scan.js';
import { serialize } from '../../src/protocol/json/write.js';

// A string of LONG_RUN (4 KiB) bytes or more is first checked in the bytes (plainAscii: native scans and a
// word-at-a-time test for control characters) and taken as it is when it is a plain run; anything else goes the
// way every string went before. It must change nothing: the same predicate as the regular expression the
// reader uses for a plain run, and the same value or refusal as reading the decoded text (which never takes
// this path).

const PLAIN = /^[^"\\\u0000-\u001f\u0080-\uffff]*$/;

describe('plainAscii', () => {
  it('is the plain-run predicate for every byte value, at every alignment and place in the run', () => {
    const backing = Buffer.alloc(600, 0x61);
    for (let offset = 0; offset < 8; offset++) {
      for (const length of [0, 1, 3, 4, 5, 7, 8, 9, 31, 256, 257, 259, 300]) {
        const places = [...new Set([0, 1, 2, 3, 4, length >> 1, length - 4, length - 3, length - 2, length - 1].filter((p) => p >= 0 && p < length))];
        for (const place of places) {
          for (let byte = 0; byte < 256; byte++) {
            const b = Buffer.from(backing.subarray(offset, offset + length)); // a copy at a known alignment below
            const aligned = Buffer.alloc(length + 8);
            b.copy(aligned, offset);
            const run = aligned.subarray(offset, offset + length);
            run[place] = byte;
            const want = PLAIN.test(run.toString('latin1'));
            // (expect only on a difference: a quarter of a million expect calls with their messages take seconds)
            if (plainAscii(run) !== want) expect(plainAscii(run), `offset ${offset} length ${length} byte ${byte} at ${place}`).toBe(want);
            if (plainAsciiInJs(run) !== want) expect(plainAsciiInJs(run), `JavaScript: offset ${offset} length ${length} byte ${byte} at ${place}`).toBe(want);
          }
        }
      }
    }
  });

  it('takes the empty run and a run of every plain byte', () => {
    expect(plainAscii(Buffer.alloc(0))).toBe(true);
    const every = Buffer.from(Array.from({ length: 0x80 - 0x20 }, (_, i) => i + 0x20).filter((c) => c !== 0x22 && c !== 0x5c));
    expect(plainAscii(every)).toBe(true);
    expect(plainAsciiInJs(every)).toBe(true);
  });
});

describe('the SIMD scan of a long run (plain-scan.ts)', () => {
  const WINDOW = 65536;

  it('runs on this node (the reader takes it for every long string)', () => {
    expect(simdScanAvailable()).toBe(true);
    expect(plainInWasm(Buffer.alloc(LONG_RUN, 0x61))).toBe(true);
  });

  it('finds one refused byte anywhere in a run of several windows, at their edges and in a last partial step', () => {
    const lengths = [63, 64, 65, 127, 4096, WINDOW - 1, WINDOW, WINDOW + 1, WINDOW + 63, 3 * WINDOW + 17];
    const refused = [0x00, 0x09, 0x0a, 0x1f, 0x22, 0x5c, 0x80, 0xc3, 0xff];
    for (const length of lengths) {
      const run = Buffer.alloc(length, 0x7e);
      expect(plainInWasm(run), `clean, length ${length}`).toBe(true);
      const places = new Set([0, 1, 15, 16, 63, 64, length >> 1, length - 64, length - 63, length - 17, length - 1]);
      for (let w = WINDOW; w < length; w += WINDOW) for (const p of [w - 1, w, w + 1]) places.add(p);
      for (const place of [...places].filter((p) => p >= 0 && p < length)) {
        for (const byte of refused) {
          run[place] = byte;
          expect(plainInWasm(run), `length ${length} byte ${byte} at ${place}`).toBe(false);
          run[place] = 0x7e;
        }
      }
      expect(plainInWasm(run), `clean again, length ${length}`).toBe(true);
    }
  });

  it('judges a run by its own bytes only: a refused byte of an earlier run in the module memory, or after the run in its buffer, does not count', () => {
    const dirty = Buffer.alloc(WINDOW, 0x61);
    dirty[WINDOW - 1] = 0x00;
    expect(plainInWasm(dirty)).toBe(false);
    const backing = Buffer.alloc(200, 0x61);
    backing[100] = 0x22;
    expect(plainInWasm(backing.subarray(0, 100))).toBe(true); // the window's last step is padded, not read past
    expect(plainInWasm(backing.subarray(3, 101))).toBe(false);
  });

  it('agrees with the JavaScript test on random runs with a few bytes of any value', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3 * WINDOW }), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }), fc.nat(7), (n, inserts, offset) => {
        const run = Buffer.alloc(n + offset, 0x41).subarray(offset);
        for (const [at, byte] of inserts) if (n > 0) run[at % n] = byte;
        expect(plainInWasm(run)).toBe(plainAsciiInJs(run));
      }),
      { numRuns: 300 },
    );
  });
});

type Outcome = { value: string } | { kind: string; message: string; offset: number; line: number; column: number };

function outcome(input: string | Uint8Array): Outcome {
  try {
    return { value: serialize(readJson(input, { maxBytes: 1 << 22, maxDepth: 16 })) };
  } catch (err) {
    if (!(err instanceof JsonReadError)) throw err;
    return { kind: err.kind, message: err.message, offset: err.offset, line: err.line, column: err.column };
  }
}

/** A JSON-RPC result line whose text is `body` as written (raw: escapes and all, not JSON-encoded). */
const lineOf = (body: string): string => `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"${body}"}]}}`;

function same(text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  expect(outcome(bytes)).toEqual(outcome(bytes.toString('utf8')));
}

describe('long strings read from bytes', () => {
  const plain = 'abcdefghijklmnopqrstuvwxyz0123456789+/= ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const long = (n: number): string => plain.repeat(Math.ceil(n / plain.length)).slice(0, n);

  it('read a plain run of a MiB as the text does', () => {
    const body = long(1 << 20);
    const v = readJson(Buffer.from(lineOf(body))) as Map<string, unknown>;
    const content = ((v.get('result') as Map<string, unknown>).get('content') as Map<string, unknown>[])[0] as Map<string, unknown>;
    expect(content.get('text')).toBe(body);
    same(lineOf(body));
  });

  it.each([
    ['a control character', '\u0001'],
    ['a tab', '\t'],
    ['a newline', '\n'],
    ['DEL (plain)', '\u007f'],
    ['an escaped quote', '\\"'],
    ['an escaped backslash', '\\\\'],
    ['a \\u escape', '\\u00e9'],
    ['a lone surrogate escape', '\\ud800'],
    ['a bad escape', '\\x'],
    ['a two-byte character', 'é'],
    ['a three-byte character', '€'],
    ['a four-byte character', '😀'],
  ])('refuse or read %s anywhere in a long run as the text does', (_, special) => {
    const n = LONG_RUN + 1000;
    for (const at of [0, 1, 2, 3, 4, 5, 999, 1000, 1001, LONG_RUN - 1, LONG_RUN, LONG_RUN + 1, n - 1, n]) {
      const body = long(n);
      same(lineOf(body.slice(0, at) + special + body.slice(at)));
    }
  });

  it('read an unterminated long string as the text does', () => {
    same(`{"text":"${long(LONG_RUN + 10)}`);
    same(`{"text":"${long(LONG_RUN + 10)}\\"}`);
    same(`{"text":"${long(LONG_RUN + 10)}"`);
  });

  it('read long runs with specials at random places as the text does (property)', () => {
    const special = fc.constantFrom('\u0000', '\u001f', '\t', '"', '\\"', '\\\\', '\\n', '\\u0041', '\\udc00', '\\q', 'é', '€', '😀', '\u007f', '\u0080');
    fc.assert(
      fc.property(fc.integer({ min: LONG_RUN - 20, max: LONG_RUN + 3000 }), fc.array(fc.tuple(fc.nat(), special), { maxLength: 3 }), fc.nat(3), (n, inserts, pad) => {
        let body = long(n);
        for (const [at, s] of inserts) {
          const i = at % 7 === 0 ? body.length - (at % 5) : at % (body.length + 1); // often near the end
          body = body.slice(0, i) + s + body.slice(i);
        }
        same(' '.repeat(pad) + lineOf(body)); // the padding moves the run's alignment in the bytes
      }),
      { numRuns: 300 },
    );
  });
});
