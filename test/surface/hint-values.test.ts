import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HINTS, judge, lockedSpec, render, type ToolSpec } from '../helpers/tool-spec.js';

// A hint whose value is not a JSON boolean (issue 26, item 2): a lax reader (pydantic coerces "true", "yes", 1,
// 1.0 to true and "false", 0 to false) may read it as either claim, so a hint changed to such a value is
// widening, blocked in every posture, and never narrowing.

describe('hints that are not JSON booleans', () => {
  it('a hint changed to a value that is not a boolean is widening, refused in every posture', () => {
    const notBoolean = fc.constantFrom('"true"', '"false"', '"yes"', '1', '0', '1.0', 'null', '{}', '[true]');
    fc.assert(
      fc.property(lockedSpec, fc.constantFrom(...HINTS), notBoolean, (locked, hint, v) => {
        const { drift, decision } = judge(render(locked), render({ ...locked, hints: { ...locked.hints, [hint]: v } }));
        expect(drift.widening).toContain(`${hint} not a boolean`);
        expect(drift.narrowingOnly).toBe(false);
        expect(decision).toEqual({ enforce: 'refuse', monitor: 'refuse' });
      }),
      { numRuns: 100 },
    );
  });

  it('a hint locked as a string and served as the same string is unchanged', () => {
    const { drift } = judge(render({ description: 'd', propType: 'string', maximum: '1', propDescription: '', hints: { readOnlyHint: '"true"' }, annotationsExtra: [], top: [], reversed: false }), render({ description: 'd', propType: 'string', maximum: '1', propDescription: '', hints: { readOnlyHint: '"true"' }, annotationsExtra: [], top: [], reversed: true }));
    expect(drift.state).toBe('matched');
  });

  it('the issue 26 case: {readOnlyHint:false, destructiveHint:true} served as {readOnlyHint:"true", destructiveHint:"false"}', () => {
    const spec = (hints: ToolSpec['hints']): string => render({ description: 'Deletes.', propType: 'string', maximum: '1', propDescription: '', hints, annotationsExtra: [], top: [], reversed: false });
    const { drift, decision } = judge(spec({ readOnlyHint: 'false', destructiveHint: 'true' }), spec({ readOnlyHint: '"true"', destructiveHint: '"false"' }));
    expect(drift).toMatchObject({ classes: ['widening', 'schema'], widening: ['readOnlyHint not a boolean', 'destructiveHint not a boolean'], narrowingOnly: false });
    expect(decision).toEqual({ enforce: 'refuse', monitor: 'refuse' });
  });
});
