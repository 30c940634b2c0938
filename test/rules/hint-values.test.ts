import { describe, expect, it } from 'vitest';
import { readJson, type JsonObject } from '../../src/protocol/json/reader.js';
import { disputingHints, hintClaim, proposedKind } from '../../src/rules/hints.js';

// A hint that is not a JSON boolean (issue 26, item 2) never makes a tool look less dangerous to the rules than
// it looks to any reader: a strict reader (the TypeScript SDK) rejects it, a lax one (pydantic) coerces "true",
// "yes", 1 to true and "false", "no", 0 to false. So a claim of danger under the lax reading is a claim, and a
// proposal reads every non-boolean as the protocol's gated default.

const tool = (annotations: string): JsonObject => readJson(`{"name":"t","annotations":${annotations}}`) as JsonObject;

describe('hints that are not JSON booleans, in the operator rules', () => {
  it('destructiveHint that a lax reader takes for true disputes every lesser kind', () => {
    for (const v of ['"true"', '"True"', '"yes"', '"1"', '1', '1.0', '"on"']) {
      expect(disputingHints(tool(`{"destructiveHint":${v},"readOnlyHint":true}`), 'read')).toEqual(['destructiveHint']);
      expect(hintClaim(tool(`{"destructiveHint":${v}}`)).atLeast).toBe('destructive');
    }
  });

  it('readOnlyHint that a lax reader takes for false disputes read', () => {
    for (const v of ['"false"', '"no"', '0', '"off"', '0.0']) expect(disputingHints(tool(`{"readOnlyHint":${v}}`), 'read')).toEqual(['readOnlyHint']);
    expect(disputingHints(tool('{"readOnlyHint":"false","openWorldHint":"true"}'), 'local-change')).toEqual(['readOnlyHint', 'openWorldHint']);
  });

  it('a non-boolean that no reader takes for a claim of danger, and null, claim nothing, as absence does', () => {
    expect(hintClaim(tool('{"destructiveHint":"false","readOnlyHint":"true","openWorldHint":null}')).atLeast).toBeUndefined();
    expect(hintClaim(tool('{"destructiveHint":null,"readOnlyHint":{}}')).atLeast).toBeUndefined();
  });

  it('a proposal never reads a non-boolean as the less-gated claim', () => {
    expect(proposedKind(tool('{"readOnlyHint":"true"}')).kind).toBe('destructive');
    expect(proposedKind(tool('{"readOnlyHint":1,"destructiveHint":"false","openWorldHint":"false"}')).kind).toBe('destructive');
    expect(proposedKind(tool('{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":"false"}')).kind).toBe('remote-change');
  });
});
