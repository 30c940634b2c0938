import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GATED, HINTS, judge, lessGated, lockedSpec, other, render, type Raw, type ToolSpec } from '../helpers/tool-spec.js';

// Narrowing, the one exception for a changed tool, is an exact relation on the whole tool (ADR 0036): the live
// tool is the locked one with only hints moved from the less-gated literal to the more-gated literal or to
// absence. Generated locked tools, their narrowings (admitted), and near-misses (a narrowing plus any other
// change, anywhere in the tool: never narrowing-only, never allowed in enforce).

/** A narrowing of `t`: some of its less-gated hints (at least one) moved to the gated literal or dropped. */
const narrowingOf = (t: ToolSpec): fc.Arbitrary<ToolSpec> =>
  fc.tuple(fc.array(fc.constantFrom('keep', 'gated', 'absent'), { minLength: 4, maxLength: 4 }), fc.constantFrom('gated', 'absent'), fc.boolean()).map(([how, first, reversed]) => {
    const hints = { ...t.hints };
    lessGated(t).forEach((h, i) => {
      const move = i === 0 ? first : how[i];
      if (move === 'gated') hints[h] = String(GATED[h]);
      else if (move === 'absent') delete hints[h];
    });
    return { ...t, hints, reversed };
  });

/** One more change, anywhere in the tool, beyond the narrowing. */
const NEAR_MISSES: Record<string, (t: ToolSpec, locked: ToolSpec, v: Raw) => ToolSpec> = {
  title: (t, _l, v) => ({ ...t, annotationsExtra: [['title', JSON.stringify(`${t.annotationsExtra[0]?.[1] ?? ''}${v}`)]] }),
  nestedDescription: (t, _l, v) => ({ ...t, annotationsExtra: [...t.annotationsExtra, ['description', JSON.stringify(v)]] }),
  unknownAnnotation: (t, _l, v) => ({ ...t, annotationsExtra: [...t.annotationsExtra, ['x-note', v]] }),
  description: (t) => ({ ...t, description: t.description + ' ' }),
  propertyDescription: (t) => ({ ...t, propDescription: t.propDescription + '.' }),
  schemaType: (t) => ({ ...t, propType: t.propType === 'string' ? 'integer' : 'string' }),
  schemaDigits: (t) => ({ ...t, maximum: t.maximum === '9007199254740993' ? '9007199254740992' : '9007199254740993' }),
  topLevelKey: (t, _l, v) => ({ ...t, top: [['x-extra', v]] }),
  topLevelTitle: (t, _l, v) => ({ ...t, top: [['title', JSON.stringify(v)]] }),
  hintNotBoolean: (t, l, v) => ({ ...t, hints: { ...t.hints, [HINTS.find((h) => l.hints[h] !== undefined) ?? 'readOnlyHint']: v === 'null' || v === '1' ? v : JSON.stringify(v === '"x"' ? 'true' : 'false') } }),
  absentSpelledOut: (t, l) => {
    const h = HINTS.find((k) => l.hints[k] === undefined);
    return h ? { ...t, hints: { ...t.hints, [h]: String(GATED[h]) } } : { ...t, top: [['x-extra', '0']] };
  },
  gatedDropped: (t, l) => {
    const h = HINTS.find((k) => l.hints[k] === String(GATED[k]));
    if (!h) return { ...t, top: [['x-extra', '0']] };
    const hints = { ...t.hints };
    delete hints[h];
    return { ...t, hints };
  },
  annotationsGone: (t) => ({ ...t, hints: {}, annotationsExtra: [], noAnnotations: true }),
};

describe('narrowing is exact on the whole tool', () => {
  it('admits a tool whose only change is hints moved from the less-gated literal to the gated one or to absence', () => {
    fc.assert(
      fc.property(lockedSpec.chain((l) => fc.tuple(fc.constant(l), narrowingOf(l))), ([locked, live]) => {
        const { drift, decision } = judge(render(locked), render(live));
        expect(drift).toMatchObject({ state: 'changed', narrowingOnly: true, widening: [], fields: ['annotations'] });
        expect(decision).toEqual({ enforce: 'allow', monitor: 'allow' });
      }),
      { numRuns: 100 },
    );
  });

  it('never admits a narrowing that carries any other change (in annotations, description, schema, digits, keys, hint types)', () => {
    const miss = fc.constantFrom(...Object.keys(NEAR_MISSES));
    fc.assert(
      fc.property(lockedSpec.chain((l) => fc.tuple(fc.constant(l), narrowingOf(l), miss, other)), ([locked, narrowed, which, v]) => {
        const live = (NEAR_MISSES[which] as (typeof NEAR_MISSES)[string])(narrowed, locked, v);
        const { drift, decision } = judge(render(locked), render(live));
        expect(drift.state).toBe('changed');
        expect(drift.narrowingOnly).toBe(false);
        expect(decision.enforce).toBe('refuse');
      }),
      { numRuns: 200 },
    );
  });

  it('a tool served again in another key order matches its lock', () => {
    fc.assert(
      fc.property(lockedSpec, (locked) => {
        expect(judge(render(locked), render({ ...locked, reversed: !locked.reversed })).drift.state).toBe('matched');
      }),
      { numRuns: 30 },
    );
  });
});

