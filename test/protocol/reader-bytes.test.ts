import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonReadError, readJson, type ReadCapture } from '../../src/protocol/json/reader.js';
import { serialize } from '../../src/protocol/json/write.js';
import { readText } from '../helpers/text-reader.js';

// readJson reads bytes (strings are read as their UTF-8 bytes) through their latin1 view (positions are byte offsets; ASCII strings are slices of a
// one-byte string) and decodes a string holding other bytes from the bytes. It must be indistinguishable from
// reading the decoded text: the same value, or the same refusal with the same offset, line and column.

type Outcome = { value: string; id?: [number, number] } | { kind: string; message: string; offset: number; line: number; column: number };

function outcome(input: string | Uint8Array): Outcome {
  const capture: ReadCapture = {};
  try {
    const value = serialize((typeof input === 'string' ? readText(input, { maxBytes: 1 << 20, maxDepth: 16 }, capture) : readJson(input, { maxBytes: 1 << 20, maxDepth: 16 }, capture)));
    return capture.idSpan ? { value, id: capture.idSpan } : { value };
  } catch (err) {
    if (!(err instanceof JsonReadError)) throw err;
    return { kind: err.kind, message: err.message, offset: err.offset, line: err.line, column: err.column };
  }
}

/** The outcome of reading `text`, with a captured id span turned from text offsets into byte offsets. */
function asText(text: string): Outcome {
  const o = outcome(text);
  if ('id' in o && o.id) {
    const [s, e] = o.id;
    o.id = [Buffer.byteLength(text.slice(0, s)), Buffer.byteLength(text.slice(0, e))];
  }
  return o;
}

function same(text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  const decoded = bytes.toString('utf8'); // text with any lone surrogate replaced, as its bytes carry it
  expect(outcome(bytes), JSON.stringify(decoded)).toEqual(asText(decoded));
}

describe('reading bytes is reading their text', () => {
  it.each([
    ['a value', '{"a":"é","b":["x😀y","\\u00e9\\n",1.5e3,true,null],"id":"ü"}'],
    ['a syntax error after multibyte characters, lines down', '{"é":"€😀",\n"b":\n  [1,]}'],
    ['a control character after multibyte ones', '["€\u0001"]'],
    ['an invalid escape after them', '{"a":"😀😀\\x"}'],
    ['a short \\u escape at the end of a string', '["é\\u12"]'],
    ['a \\u escape cut by the end of input', '["é\\u00'],
    ['an escaped quote and backslash among them', '["é\\"\\\\", "\\\\"]'],
    ['a lone surrogate escape after them', '{"é\\n":"€\\ud800x"}'],
    ['an unterminated string', '{"a":"é€'],
    ['an unterminated string ending in a backslash', '["é\\'],
    ['a duplicate key spelled two ways', '{"é":1,"\\u00e9":2}'],
    ['a byte order mark in a string and before the value', '["\ufeff"]'],
    ['a byte order mark before the value', '\ufeff[]'],
    ['a non-breaking space as whitespace', '[1,\u00a02]'],
    ['a multibyte character outside a string', '[1,é]'],
    ['content after the value', '{"é":1} é'],
    ['nesting too deep after text', `["é",${'['.repeat(20)}]`],
    ['the id after multibyte text', '{"x":"€€€","id":"😀","y":"é"}'],
    ['an id with escapes', '{"id":"a\\u00e9😀\\n","y":1}'],
  ])('%s', (_what, text) => same(text));

  it('whatever the text, valid or not', () => {
    const piece = fc.constantFrom('"', '\\', '\\u', '\\ud83d', '\\ude00', '\\n', 'u00e9', '\n', ' ', ',', ':', '{', '}', '[', ']', 'é', '€', '😀', '\ufeff', '\u0001', '\u007f', 'a', '1', 'true', '"id"');
    const text = fc.oneof(
      fc.json({ maxDepth: 3 }),
      fc.tuple(fc.json({ maxDepth: 3 }), fc.array(fc.tuple(fc.nat(), piece), { maxLength: 4 })).map(([t, edits]) => {
        let s = t;
        for (const [at, p] of edits) {
          const i = at % (s.length + 1);
          s = s.slice(0, i) + p + s.slice(i);
        }
        return s;
      }),
      fc.array(piece, { maxLength: 24 }).map((ps) => ps.join('')),
    );
    fc.assert(fc.property(text, same), { numRuns: 2000 });
  });

  it('refuses invalid UTF-8 as before', () => {
    for (const bytes of [[0x22, 0xff, 0x22], [0x22, 0xed, 0xa0, 0x80, 0x22], [0x22, 0xc0, 0x80, 0x22], [0x22, 0xf4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xe2, 0x82]]) {
      expect(outcome(new Uint8Array(bytes))).toEqual({ kind: 'invalid_utf8', message: 'invalid UTF-8 at line 1 column 1', offset: 0, line: 1, column: 1 });
    }
  });

  it('reads a view into a larger buffer from its own start', () => {
    const all = Buffer.from('xx{"id":"é","a":[1]}yy');
    const capture: ReadCapture = {};
    expect(serialize(readJson(all.subarray(2, all.length - 2), undefined, capture))).toBe('{"id":"é","a":[1]}');
    expect(capture.idSpan).toEqual([6, 10]);
  });
});
