import { describe, expect, it } from 'vitest';
import { readJson, type JsonObject } from '../../src/protocol/json/reader.js';
import { RulesGate } from '../../src/rules/gate.js';
import { parseRules } from '../../src/rules/schema.js';

// Review 14 finding 3 (docs/adr/0037 addendum): the operator's rules verdict on a tool comes from the warden's own
// complete listing; a page of the client's listing only takes away (allow, then ask, then withhold).

const tool = (name: string, annotations: Record<string, boolean>, hTool: string) => ({ name, hTool, value: readJson(JSON.stringify({ name, description: 'Reads.', inputSchema: { type: 'object' }, annotations })) as JsonObject });
const READS = tool('look', { readOnlyHint: true }, 'h-read');
const DESTROYS = tool('look', { readOnlyHint: false, destructiveHint: true }, 'h-destroy');
const gate = (): RulesGate => new RulesGate(parseRules({ mode: 'strict', tools: { look: { kind: 'read' } } }));

describe('RulesGate: a page of the client listing only takes away', () => {
  it('a page showing another form that the rules allow does not replace the listing verdict that withheld the tool', () => {
    const g = gate();
    expect(g.judge([DESTROYS], true)[0]?.decision).toBe('withhold');
    expect(g.judge([READS], false)[0]?.decision).toBe('allow'); // what the page shows is judged for the page
    expect(g.verdict('look')).toMatchObject({ decision: 'withhold', reason: 'hint_mismatch' });
  });

  it('a page showing a form the rules withhold takes the tool away until the next complete listing', () => {
    const g = gate();
    g.judge([READS], true);
    g.judge([DESTROYS], false);
    expect(g.verdict('look')?.decision).toBe('withhold');
    g.judge([READS], false);
    expect(g.verdict('look')?.decision).toBe('withhold');
    g.judge([READS], true);
    expect(g.verdict('look')?.decision).toBe('allow');
  });

  it('a tool no complete listing showed gets no verdict from a page', () => {
    const g = gate();
    g.judge([], true);
    g.judge([READS], false);
    expect(g.verdict('look')).toBeUndefined();
  });
});
