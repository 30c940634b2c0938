import fs from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { unhomoglyph } from '../../src/scan/confusables.js';

// src/scan/confusables.ts replaces unhomoglyph's one regular expression by a lookup per code point; the names it
// judges (NAME_HOMOGLYPH, shadowing, the warden's own name in a question) depend on the two being the same.
const require = createRequire(import.meta.url);
const reference = require('unhomoglyph') as (s: string) => string;
const table = require('unhomoglyph/data.json') as Record<string, string>;

describe('unhomoglyph by lookup', () => {
  it('maps every character of the table as unhomoglyph does, alone and between other text', () => {
    const keys = Object.keys(table);
    expect(keys.length).toBe(6311);
    const differ = keys.filter((k) => unhomoglyph(k) !== reference(k) || unhomoglyph(`a${k}b${k}`) !== reference(`a${k}b${k}`));
    expect(differ).toEqual([]);
  });

  it('gives unhomoglyph\'s result for mixed text: astral characters, lone surrogates, replaced characters side by side, none at all', () => {
    const keys = Object.keys(table);
    const astral = keys.filter((k) => k.length === 2);
    expect(astral.length).toBeGreaterThan(0);
    const samples = [
      '',
      'plain-ascii_name',
      'mсp-wаrdеn', // Cyrillic с, а, е
      `${astral[0]}${astral[1]}x${astral[0]}`,
      `\ud835${keys[10]}\udc00${keys[20]}`, // lone high and low surrogates beside keys
      `\ud83d\ude00 emoji ${keys[100]}${keys[101]}${keys[102]}`,
      keys.join(''),
    ];
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let s = 0; s < 200; s++) {
      let text = '';
      for (let c = 0; c < 24; c++) text += next(3) === 0 ? (keys[next(keys.length)] as string) : String.fromCharCode(next(0x3000));
      samples.push(text);
    }
    expect(samples.filter((t) => unhomoglyph(t) !== reference(t))).toEqual([]);
  });

  it('is, in the bundle a client starts, parsed at its first use from unhomoglyph\'s data: the same 6,311 entries (scripts/bundle.mjs)', () => {
    const bundle = fs.readFileSync(new URL('../../dist/bundle/plain-run.js', import.meta.url), 'utf8');
    const lazy = /function confusablesTable\(\)\{return \w+\?\?=JSON\.parse\((`(?:[^`\\]|\\.)*`)\)\}/s.exec(bundle);
    expect(lazy).not.toBeNull();
    const parsed = JSON.parse(new Function(`return ${lazy?.[1]};`)() as string) as Record<string, string>;
    expect(parsed).toEqual(table);
    expect(Object.keys(parsed)).toEqual(Object.keys(table));
  });
});
