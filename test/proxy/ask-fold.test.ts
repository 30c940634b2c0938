import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldedForName, impersonatesWarden } from '../../dist/proxy/ask.js';
import type { JsonValue } from '../../src/protocol/json/reader.js';

// The fold that reads a server's elicitation for the warden's name (ADR 0039), property-tested: the name spelled
// with any mix of case, look-alike letters of other scripts, compatibility forms, and invisible characters,
// spaces and dashes between its letters is found; text without the name is not.

/** Letters of "mcpwarden" and look-alikes a person reads as them (Cyrillic, Greek, fullwidth, mathematical). */
const LOOKALIKES: Record<string, string[]> = {
  m: ['m', 'M', 'ｍ', 'Μ', 'М', '𝗆', 'ⅿ'],
  c: ['c', 'C', 'с', 'С', 'ϲ', 'ｃ', 'ⅽ'],
  p: ['p', 'P', 'р', 'Р', 'ρ', 'ｐ', '𝗉'],
  w: ['w', 'W', 'ԝ', 'Ԝ', 'ｗ', 'ꮃ'],
  a: ['a', 'A', 'а', 'А', 'ɑ', 'ａ', '𝖺'],
  r: ['r', 'R', 'ｒ', 'г', '𝗋'],
  d: ['d', 'D', 'ԁ', 'ｄ', 'ⅾ'],
  e: ['e', 'E', 'е', 'Е', 'ｅ', 'ℯ'],
  n: ['n', 'N', 'ｎ', 'ո', '𝗇'],
};
const BETWEEN = ['', '', '', ' ', '-', '_', '\u2011', '\u200b', '\u200d', '\u2060', '\u00ad', '\ufe0f', '\u{e0020}', '.', '\u0301'];

const disguised = fc.tuple(...[...'mcpwarden'].map((ch) => fc.tuple(fc.constantFrom(...(LOOKALIKES[ch] as string[])), fc.constantFrom(...BETWEEN)))).map((parts) => parts.map(([l, b]) => l + b).join(''));

describe('the fold for the warden name', () => {
  it('finds the name however it is disguised, anywhere in the text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), disguised, fc.string({ maxLength: 20 }), (before, name, after) => {
        expect(foldedForName(`${before}${name}${after}`)).toContain(foldedForName('mcp-warden'));
        expect(impersonatesWarden(new Map<string, JsonValue>([['message', 'ok'], ['requestedSchema', new Map([['title', `${before}${name}${after}`]])]]))).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('does not find it in text without it (a name with a letter changed or left out)', () => {
    for (const near of ['mcp-warder', 'mcp-garden', 'mcpwardn', 'mc-warden', 'mcb-warden', 'warden of the notes', 'MCP server', 'Файл для чтения']) {
      expect(impersonatesWarden(new Map([['message', near]]))).toBe(false);
    }
  });
});
