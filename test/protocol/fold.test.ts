import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonNumber, type JsonValue } from '../../src/protocol/json/reader.js';
import { FOLDED_TO_ASCII, caseVariant, foldName, foldedNames, variantOf } from '../../src/protocol/fold.js';
import { WardenInputRequired } from '../../src/proxy/input-required.js';
import { admitArguments } from '../../src/rules/call.js';
import { InadmissibleError, refuseCaseVariants } from '../../src/surface/admit.js';

// The one fold of member names (protocol/fold.ts): what a reader ignoring case (Go's encoding/json, Java, .NET,
// a JavaScript or Python peer comparing upper or lower case, cJSON cutting at NUL) takes for a name the warden
// reads is folded to that name's fold, and every comparison of member names without regard to case goes
// through it (review 18: "ı", "İ" were missed, and surface/admit.ts folded on its own).

/** Every spelling of an ASCII letter run that some reader ignoring case takes for it, from fold.ts's list. */
const SPELLINGS: ReadonlyMap<string, string[]> = (() => {
  const m = new Map<string, string[]>();
  for (const c of FOLDED_TO_ASCII) {
    const ascii = foldName(c);
    m.set(ascii, [...(m.get(ascii) ?? []), c]);
  }
  return m;
})();

/** The ASCII letters a code point's case mappings take it to (lower case), or undefined. JavaScript maps with
 *  the full mappings; a code point's simple lower case is the first of its full one (only U+0130 has a longer
 *  full lower case: "i" and U+0307; its simple one is "i"). */
function asciiOf(c: string): string | undefined {
  const lower = c.toLowerCase();
  const upper = c.toUpperCase();
  const mapped = [lower, upper, lower.toUpperCase(), upper.toLowerCase(), String.fromCodePoint(lower.codePointAt(0) as number)];
  const ascii = mapped.find((m) => /^[A-Za-z]+$/.test(m));
  return ascii?.toLowerCase();
}

describe('the fold of member names', () => {
  it('takes every code point outside ASCII that a case mapping makes ASCII letters of to those letters, and lists exactly those', () => {
    const found: string[] = [];
    const wrong: string[] = [];
    for (let cp = 0x80; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      // No case: every mapping of it is itself, outside ASCII, and so is its fold.
      if (c.toLowerCase() === c && c.toUpperCase() === c) continue;
      const ascii = asciiOf(c);
      // A fold in ASCII is only that of a listed code point: a key folds to ASCII text of another length only
      // when it holds one of them or a NUL (surface/admit.ts passes over other keys on their length).
      if (ascii === undefined) {
        if (/^[\u0000-\u007f]+$/.test(foldName(c))) wrong.push(`U+${cp.toString(16)}`);
        continue;
      }
      found.push(c);
      if (foldName(c) !== ascii) wrong.push(`U+${cp.toString(16)}`);
    }
    expect(wrong).toEqual([]);
    expect(found.sort()).toEqual([...FOLDED_TO_ASCII].sort());
    // The four of Go's encoding/json (unicode.ToUpper(unicode.ToLower(r))) among them.
    expect(['\u0130', '\u0131', '\u017f', '\u212a'].map(foldName)).toEqual(['i', 'i', 's', 'k']);
  });

  it('equates an ASCII name with any spelling of it in other cases, with the listed code points, and cut at NUL', () => {
    const spelled = fc
      .array(fc.constantFrom(...'abcdefiklnoprstuxyzADFIKLST_0'), { minLength: 1, maxLength: 14 })
      .map((cs) => cs.join(''))
      .chain((name) => {
        // Each run the list knows may be written as one of its code points, each letter in either case.
        const runs = [...SPELLINGS.keys()].sort((a, b) => b.length - a.length);
        const parts: string[] = [];
        for (let i = 0; i < name.length; ) {
          const run = runs.find((r) => name.toLowerCase().startsWith(r, i));
          parts.push(run ? name.slice(i, i + run.length) : (name[i] as string));
          i += run ? run.length : 1;
        }
        const options = parts.map((p) => fc.constantFrom(p, p.toUpperCase(), p.toLowerCase(), ...(SPELLINGS.get(p.toLowerCase()) ?? [])));
        return fc.tuple(fc.constant(name), fc.tuple(...options), fc.option(fc.string({ maxLength: 4 }), { nil: undefined }));
      })
      .map(([name, parts, tail]) => ({ name, key: parts.join('') + (tail === undefined ? '' : `\u0000${tail}`) }));
    fc.assert(
      fc.property(spelled, ({ name, key }) => {
        expect(foldName(key)).toBe(foldName(name));
        const names = foldedNames([name, 'other']);
        expect(variantOf(key, names)).toBe(key === name ? undefined : name);
        expect(caseVariant(['other', key], names)).toEqual(key === name ? undefined : { key, name });
        let refused: string | undefined;
        try {
          refuseCaseVariants(new Map([[key, new JsonNumber('1')]]), [name], 'an object');
        } catch (err) {
          if (!(err instanceof InadmissibleError)) throw err;
          refused = err.reason;
        }
        if (key === name) expect(refused).toBeUndefined();
        else expect(refused).toMatch(new RegExp(`^an object carries ".+", a case-variant of "${name}"$`, 's'));
        // A denied parameter under that spelling (PROTOTYPE_KEYS aside, refused as arguments_invalid first).
        if (!['__proto__', 'constructor', 'prototype'].includes(key)) {
          const verdict = { name: 't', decision: 'allow' as const, override: [], deny: new Set([name]), fixed: new Map() };
          expect(admitArguments(verdict, new Map([['arguments', new Map([[key, new JsonNumber('1')]])]]))).toMatchObject({ ok: false, reason: 'parameter_denied' });
        }
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a retry whose params carry another spelling of requestState or inputResponses', () => {
    const retry = new WardenInputRequired();
    for (const key of ['requeststate', 'REQUESTSTATE', 'reque\u017ftState', 'requestState\u0000', '\u0131nputResponses', '\u0130NPUTRESPONSES', 'inputResponſes']) {
      expect(retry.read('tools/call', new Map<string, JsonValue>([['name', 't'], [key, 'x']]))).toMatchObject({ kind: 'refused', invalid: true, detail: expect.stringContaining('without regard to case') });
    }
    expect(retry.read('tools/call', new Map<string, JsonValue>([['name', 't'], ['requestStates', 'x']]))).toEqual({ kind: 'none' });
  });

  it('keeps ASCII names apart that differ in more than case', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[ -~]{0,8}$/), fc.stringMatching(/^[ -~]{0,8}$/), (a, b) => {
        expect(foldName(a) === foldName(b)).toBe(a.toLowerCase() === b.toLowerCase());
      }),
      { numRuns: 300 },
    );
  });

  it('folds other letters as Go does, by their simple mappings: "σ", "ς" and "Σ" are one, "ǅ", "ǆ" and "Ǆ" are one', () => {
    expect(new Set(['σ', 'ς', 'Σ', 'xΣ', 'xς'].map((s) => foldName(s).slice(-1))).size).toBe(1);
    expect(new Set(['ǅ', 'ǆ', 'Ǆ'].map(foldName)).size).toBe(1);
    expect(foldName('é')).not.toBe(foldName('e'));
  });

  it('names a camel-case name\'s all-lower-case spelling as a variant of it, and never the name itself', () => {
    const names = foldedNames(['mcpServers', 'inputSchema']);
    expect(variantOf('mcpservers', names)).toBe('mcpServers');
    expect(variantOf('INPUTSCHEMA', names)).toBe('inputSchema');
    expect(variantOf('mcpServers', names)).toBeUndefined();
    expect(variantOf('mcpServer', names)).toBeUndefined();
  });
});
