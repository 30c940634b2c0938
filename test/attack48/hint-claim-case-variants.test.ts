import { describe, expect, it } from 'vitest';
import { readJson, type JsonObject } from '../../src/protocol/json/reader.js';
import { RulesGate } from '../../src/rules/gate.js';
import { parseRules } from '../../src/rules/schema.js';

// Review 25 (the same cause as hint-case-variants.test.ts, at first trust and under the operator's rules):
// rules/hints.ts reads a claim of danger "as any reader reads it" for values (pydantic's lax booleans), but by
// the exact member name only. {"readOnlyHint":true,"destructiveHint":false,"DestructiveHint":true} claims
// destructive to a client that matches names without regard to case and keeps the last (Go's encoding/json v1,
// .NET with PropertyNameCaseInsensitive): the operator's "read" must be disputed (hint_mismatch), as it is for
// {"destructiveHint":true}.

const look = (annotations: string): { name: string; hTool: string; value: JsonObject } => ({
  name: 'look',
  hTool: 'h',
  value: readJson(`{"name":"look","description":"Reads.","inputSchema":{"type":"object"},"annotations":${annotations}}`) as JsonObject,
});
const gate = (): RulesGate => new RulesGate(parseRules({ mode: 'strict', tools: { look: { kind: 'read' } } }));

describe('attack48: a claim of danger spelled in another case disputes the operator\'s kind', () => {
  it('"DestructiveHint": true after "destructiveHint": false withholds a tool the operator classified read (hint_mismatch)', () => {
    const g = gate();
    g.judge([look('{"readOnlyHint":true,"destructiveHint":false,"DestructiveHint":true}')], true);
    expect(g.verdict('look')).toMatchObject({ decision: 'withhold', reason: 'hint_mismatch' });
  });

  it('"readonlyhint": false after "readOnlyHint": true withholds a tool the operator classified read (hint_mismatch)', () => {
    const g = gate();
    g.judge([look('{"readOnlyHint":true,"readonlyhint":false}')], true);
    expect(g.verdict('look')).toMatchObject({ decision: 'withhold', reason: 'hint_mismatch' });
  });

  it('the exact spelling withholds it (the control: hint_mismatch as designed)', () => {
    const g = gate();
    g.judge([look('{"readOnlyHint":true,"destructiveHint":true}')], true);
    expect(g.verdict('look')).toMatchObject({ decision: 'withhold', reason: 'hint_mismatch' });
  });
});
