import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FOLDED_TO_ASCII, foldName } from '../../src/protocol/fold.js';
import { readJson, type JsonObject } from '../../src/protocol/json/reader.js';
import { disputingHints, hintClaim, proposedKind } from '../../src/rules/hints.js';
import { HINTS, judge, lockedSpec, render, type HintKey } from '../helpers/tool-spec.js';

// Review 25: a client matching member names without regard to case (Go's encoding/json keeps the last, .NET
// with PropertyNameCaseInsensitive) reads "ReadOnlyHint", "readonlyhint", "readOnlyHınt", "deſtructiveHint",
// "deﬆructiveHint", "readOnlyHint\u0000x" as the hint (protocol/fold.ts, the one fold). Any such spelling is
// read by the surface judge (widening unless the lock holds it as it is) and by the operator rules (the most
// dangerous reading of all the spellings).

/** The runs of ASCII letters some reader takes a listed code point for, longest first, with those code points. */
const SPELLINGS: ReadonlyMap<string, string[]> = (() => {
  const m = new Map<string, string[]>();
  for (const c of FOLDED_TO_ASCII) m.set(foldName(c), [...(m.get(foldName(c)) ?? []), c]);
  return new Map([...m].sort((a, b) => b[0].length - a[0].length));
})();

/** Every spelling of `name` that folds like it: each letter in either case, a run as a listed code point, a NUL
 *  and a tail after it; never the name itself. */
const spellingOf = (name: string): fc.Arbitrary<string> => {
  const parts: string[] = [];
  for (let i = 0; i < name.length; ) {
    const run = [...SPELLINGS.keys()].find((r) => name.toLowerCase().startsWith(r, i));
    parts.push(run ? name.slice(i, i + run.length) : (name[i] as string));
    i += run ? run.length : 1;
  }
  const options = parts.map((p) => fc.constantFrom(p, p.toUpperCase(), p.toLowerCase(), ...(SPELLINGS.get(p.toLowerCase()) ?? [])));
  return fc
    .tuple(fc.tuple(...options), fc.option(fc.string({ maxLength: 3 }), { nil: undefined }))
    .map(([ps, tail]) => ps.join('') + (tail === undefined ? '' : `\u0000${tail}`))
    .filter((key) => key !== name);
};

const hintAndSpelling = fc.constantFrom(...HINTS).chain((hint) => fc.tuple(fc.constant(hint), spellingOf(hint)));

describe('hints spelled in another case (review 25)', () => {
  it('a hint spelled otherwise, added to a locked tool with any value, is widening, refused in every posture', () => {
    fc.assert(
      fc.property(lockedSpec, hintAndSpelling, fc.constantFrom('true', 'false', '"true"', '1'), fc.boolean(), (locked, [hint, key], v, first) => {
        // Before the locked members, or after them (where a reader keeping the last reads it).
        const live = first ? render(locked).replace('"annotations":{', `"annotations":{${JSON.stringify(key)}:${v},`) : render({ ...locked, annotationsExtra: [...locked.annotationsExtra, [key, v]] });
        const { drift, decision } = judge(render(locked), live);
        expect(drift.widening).toContain(`${hint} spelled otherwise`);
        expect(drift.narrowingOnly).toBe(false);
        expect(decision).toEqual({ enforce: 'refuse', monitor: 'refuse' });
      }),
      { numRuns: 150 },
    );
  });

  it('a spelling the lock holds with the same value is not widening (the approved claim); another value is', () => {
    const spec = (extra: [string, string][]): string => render({ description: 'd', propType: 'string', maximum: '1', propDescription: '', hints: { readOnlyHint: 'false' }, annotationsExtra: extra, top: [], reversed: false });
    expect(judge(spec([['ReadOnlyHint', 'true']]), spec([['ReadOnlyHint', 'true'], ['title', '"t"']])).drift.widening).toEqual([]);
    expect(judge(spec([['ReadOnlyHint', 'false']]), spec([['ReadOnlyHint', 'true']])).drift.widening).toEqual(['readOnlyHint spelled otherwise']);
  });

  it('a claim of danger under any spelling, before or after the exact hint, disputes the kinds below it and is proposed', () => {
    const cases: { hint: HintKey; base: string; danger: string; atLeast: 'destructive' | 'local-change' | 'remote-change'; below: 'read' | 'local-change' }[] = [
      { hint: 'destructiveHint', base: '"readOnlyHint":true,"destructiveHint":false,"openWorldHint":false', danger: 'true', atLeast: 'destructive', below: 'read' },
      { hint: 'readOnlyHint', base: '"readOnlyHint":true,"destructiveHint":false,"openWorldHint":false', danger: 'false', atLeast: 'local-change', below: 'read' },
      { hint: 'openWorldHint', base: '"readOnlyHint":false,"destructiveHint":false,"openWorldHint":false', danger: 'true', atLeast: 'remote-change', below: 'local-change' },
    ];
    const spelled = fc.constantFrom(...cases).chain((c) => fc.tuple(fc.constant(c), spellingOf(c.hint), fc.boolean()));
    fc.assert(
      fc.property(spelled, ([c, key, first]) => {
        const member = `${JSON.stringify(key)}:${c.danger}`;
        const tool = readJson(`{"name":"t","annotations":{${first ? `${member},${c.base}` : `${c.base},${member}`}}}`) as JsonObject;
        expect(hintClaim(tool).atLeast).toBe(c.atLeast);
        expect(disputingHints(tool, c.below)).toContain(c.hint);
        expect(proposedKind(tool).kind).toBe(c.atLeast);
      }),
      { numRuns: 150 },
    );
  });
});
