import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escaped, escapedJson, printable } from '../dist/escape.js';

// The one escaper (src/escape.ts, ADR 0039): what it shows as an escape, that it is idempotent and leaves other
// text alone, that its JSON form parses to the same values, and that no other escaping list exists in src/.

const SRC = path.resolve(import.meta.dirname, '../src');
const cp = (n: number): string => String.fromCodePoint(n);
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Code points the issue names, each with why: every one must print as an escape. */
const HIDDEN: [string, number[]][] = [
  ['C0 controls', range(0x00, 0x1f)],
  ['DEL and C1 controls (U+009B is an 8-bit CSI)', range(0x7f, 0x9f)],
  ['bidi controls and marks', [0x061c, 0x200e, 0x200f, ...range(0x202a, 0x202e), ...range(0x2066, 0x2069)]],
  ['zero-width characters and the BOM', [0x200b, 0x200c, 0x200d, 0x2060, 0xfeff]],
  ['Unicode tags', range(0xe0000, 0xe007f)],
  ['variation selectors', [...range(0xfe00, 0xfe0f), ...range(0xe0100, 0xe01ef), 0x180b, 0x180c, 0x180d, 0x180f]],
  ['invisible fillers and joiners', [0x034f, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x3164, 0xffa0, 0x2800, 0x180e]],
  ['private use', [0xe000, 0xf8ff, 0xf0000, 0x10fffd]],
  ['unassigned and noncharacters', [0x0378, 0xfdd0, 0xfffe, 0xffff, 0x10ffff]],
  ['line and paragraph separators', [0x2028, 0x2029]],
  ['soft hyphen and invisible operators', [0x00ad, 0x2061, 0x2062, 0x2063, 0x2064]],
  ['spaces other than U+0020', [0x00a0, 0x1680, 0x2000, 0x200a, 0x202f, 0x205f, 0x3000]],
  ['interlinear annotation and shorthand format controls', [0xfff9, 0xfffa, 0xfffb, 0x1bca0, 0x1d173]],
];

describe('escaped', () => {
  it.each(HIDDEN)('shows every one of the %s as an escape', (_what, points) => {
    for (const n of points) {
      const want = n > 0xffff ? `\\u{${n.toString(16).padStart(5, '0')}}` : `\\u${n.toString(16).padStart(4, '0')}`;
      expect(escaped(`a${cp(n)}b`)).toBe(`a${want}b`);
    }
  });

  it('shows a lone surrogate as an escape and keeps a pair whole', () => {
    expect(escaped('a\ud800b\udc00c')).toBe('a\\ud800b\\udc00c');
    expect(escaped('\ud83d\ude00')).toBe('\ud83d\ude00');
  });

  it('leaves visible text of any script as it is', () => {
    for (const text of ['Read a file.', 'Lit un fichier « déjà ».', 'Файл для чтения', '読み取り専用', 'x = "\\n" \\ y', '😀 ✓ → ∑']) expect(escaped(text)).toBe(text);
  });

  it('is idempotent and leaves no code point of its list in what it returns', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (s) => {
        const once = escaped(s);
        expect(escaped(once)).toBe(once);
      }),
      { numRuns: 2000 },
    );
  });

  it('printable cuts, quotes in JSON syntax and escapes', () => {
    expect(printable('a"b\\c\u202e')).toBe('a\\"b\\\\c\\u202e');
    expect(printable('x'.repeat(70))).toBe(`${'x'.repeat(64)}…`);
    // A cut through a surrogate pair leaves half of it: shown as an escape, never as a broken character.
    expect(printable(`${'x'.repeat(63)}\u{e0041}`)).toBe(`${'x'.repeat(63)}\\udb40…`);
  });
});

describe('escapedJson', () => {
  it('parses to the same values and holds none of the list raw but the whitespace between tokens', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }), (v) => {
        const text = escapedJson(JSON.stringify(v, null, 2));
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(v)));
        expect(escaped(text.replace(/[\n]/g, ''))).toBe(text.replace(/[\n]/g, ''));
      }),
      { numRuns: 1000 },
    );
  });
});

/** Every .ts file under src/. */
function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sources(path.join(dir, d.name)) : d.name.endsWith('.ts') ? [path.join(dir, d.name)] : []));
}

describe('one escaper', () => {
  it('no file of src/ but escape.ts replaces code points of a list of its own, or escapes with JSON alone', () => {
    // A .replace() whose pattern names code points (by escape or by Unicode property) and whose replacement
    // writes \u escapes is an escaping list; JSON.stringify(…).slice(1, -1) is an escaper that knows only C0. protocol/json/value.ts keeps the JSON
    // syntax for a key in a parse error (protocol/ imports nothing else of src/; its printers escape).
    const LIST = /\.replace\(\s*\/(?:[^/\\\n]|\\.)*?(?:\\u[0-9a-fA-F{]|\\x[0-9a-fA-F]{2}|\\p\{[CZ])(?:[^/\\\n]|\\.)*\/[a-z]*\s*,[^\n]*\\\\u/;
    const JSON_ONLY = /JSON\.stringify\([^;]*?\)\s*\.slice\(1,\s*-1\)/;
    const found = sources(SRC)
      .filter((f) => !f.endsWith(`${path.sep}escape.ts`))
      .flatMap((f) => {
        const text = fs.readFileSync(f, 'utf8');
        const rel = path.relative(SRC, f);
        return [...(LIST.test(text) ? [`${rel}: a list of code points`] : []), ...(JSON_ONLY.test(text) && rel !== path.join('protocol', 'json', 'value.ts') ? [`${rel}: JSON.stringify as an escaper`] : [])];
      });
    expect(found).toEqual([]);
  });

  it('no print of src/cli/ interpolates a server id or name outside the one escaper (tools.lock and warden.lock keys are any string)', () => {
    // A line, a question, a progress line or a write not given escaped(...) whose source line holds `${id}`,
    // `${o.id}`, `${v.server}`...: the id reaches the terminal as it is (issue 26, eleventh review: verify, scan).
    const PRINT = /\b(?:line|confirm|write|progress)\((?!escaped\()/;
    const ID = /\$\{(?:\w+\.)?(?:id|server|serverId)\}/;
    const found = sources(path.join(SRC, 'cli')).flatMap((f) =>
      fs
        .readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((l, i) => (PRINT.test(l) && ID.test(l) ? [`${path.relative(SRC, f)}:${i + 1}: ${l.trim().slice(0, 80)}`] : [])),
    );
    expect(found).toEqual([]);
  });
});
