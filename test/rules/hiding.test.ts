import { describe, expect, it } from 'vitest';
import { readJson, type JsonObject } from '../../src/protocol/json/reader.js';
import { serialize } from '../../src/protocol/json/write.js';
import { disputingHints, hintClaim, proposedKind } from '../../src/rules/hints.js';
import { externalReference, hideParameters, quantifiers, type Hidden } from '../../src/rules/input-schema.js';

// The two judgements the rules make on a server's own text: which parameters can be hidden soundly, and what
// the annotations claim. Both are pure functions of the bytes; here they meet the shapes a hostile schema takes.

const json = (text: string): JsonObject => readJson(Buffer.from(text), { maxBytes: 1 << 20, maxDepth: 64 }) as JsonObject;
const deny = (name: string): Hidden => ({ name, fixed: false });
const fix = (name: string): Hidden => ({ name, fixed: true });
const hide = (schema: string, hidden: Hidden[]) => {
  const r = hideParameters(json(schema), hidden);
  return 'refused' in r ? { refused: r.refused } : { shown: serialize(r.schema) };
};

describe('hiding a parameter from an input schema', () => {
  it('removes it from properties and keeps everything else as it was', () => {
    expect(hide('{"type":"object","properties":{"a":{"type":"string"},"mode":{"enum":["x"]}},"additionalProperties":false}', [deny('mode')])).toEqual({
      shown: '{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}',
    });
  });

  it('drops a fixed parameter from the top-level required list (the warden supplies it) but refuses a denied one the schema requires', () => {
    expect(hide('{"type":"object","properties":{"path":{},"q":{}},"required":["path","q"]}', [fix('path')])).toEqual({ shown: '{"type":"object","properties":{"q":{}},"required":["q"]}' });
    expect(hide('{"type":"object","properties":{"path":{}},"required":["path"]}', [fix('path')])).toEqual({ shown: '{"type":"object","properties":{}}' });
    expect(hide('{"type":"object","properties":{"path":{}},"required":["path"]}', [deny('path')])).toMatchObject({ refused: expect.stringMatching(/requires the hidden parameter "path" at the top level/) });
  });

  it.each([
    ['dependentRequired names it', '{"properties":{"mode":{},"a":{}},"dependentRequired":{"a":["mode"]}}', /has dependentRequired on the hidden parameter "mode"/],
    ['dependentSchemas is keyed by it', '{"properties":{"mode":{}},"dependentSchemas":{"mode":{"required":["a"]}}}', /has dependentSchemas on the hidden parameter "mode"/],
    ['a then branch requires it', '{"properties":{"mode":{}},"if":{"required":["a"]},"then":{"required":["mode"]}}', /requires the hidden parameter "mode" at \/then/],
    ['a not declares it again', '{"properties":{"mode":{}},"not":{"properties":{"mode":{"const":"x"}}}}', /declares again the hidden parameter "mode" at \/not/],
    ['a pattern of patternProperties matches it', '{"properties":{"mode":{}},"patternProperties":{"^mo":{"type":"string"}}}', /matches a pattern of patternProperties to the hidden parameter "mode"/],
    ['propertyNames constrains every name', '{"properties":{"mode":{}},"propertyNames":{"maxLength":3}}', /constrains parameter names \(propertyNames/],
    ['a subschema constrains undeclared parameters', '{"properties":{"mode":{}},"allOf":[{"additionalProperties":{"type":"number"}}]}', /constrains undeclared parameters in a subschema \(\/allOf\/0\)/],
    ['the schema refers to itself', '{"properties":{"mode":{},"child":{"$ref":"#"}}}', /refers to itself/],
    ['an embedded resource changes the base', '{"properties":{"mode":{}},"allOf":[{"$id":"https://x.example/s","required":["a"]}]}', /embedded resource/],
    ['a $dynamicRef cannot be followed', '{"properties":{"mode":{}},"allOf":[{"$dynamicRef":"#meta"}]}', /cannot follow \(\$dynamicRef\)/],
    ['an anchor reference cannot be followed', '{"properties":{"mode":{}},"allOf":[{"$ref":"#anchor"}]}', /cannot follow \(\$ref\)/],
    ['a pattern this warden cannot read', '{"properties":{"mode":{}},"patternProperties":{"(?<":{}}}', /pattern .* this warden cannot read/],
    ['a pattern with two quantifiers, which may backtrack for minutes', '{"properties":{"mode":{}},"patternProperties":{"^(?:.*){9}!$":{}}}', /pattern .* too complex for this warden to run/],
    ['a pattern over 256 characters', `{"properties":{"mode":{}},"patternProperties":{"^${'x'.repeat(300)}$":{}}}`, /pattern .* too complex for this warden to run/],
  ])('refuses when %s', (_what, schema, reason) => {
    expect(hide(schema, [deny('mode')])).toMatchObject({ refused: expect.stringMatching(reason) });
  });

  it('runs a pattern of one quantifier, and counts none in escapes, classes or group syntax', () => {
    expect(hide('{"properties":{"mode":{}},"patternProperties":{"^[a-z]+_x$":{}}}', [deny('mode')])).toHaveProperty('shown');
    expect([quantifiers('^x-'), quantifiers('^[*+?{]\\*\\+(?:ab)$'), quantifiers('^a+$'), quantifiers('(a*)*'), quantifiers('a{2}b?')]).toEqual([0, 0, 1, 2, 2]);
  });

  it('allows the same name in a nested object, which is another set of arguments', () => {
    const schema = '{"properties":{"path":{},"edits":{"type":"array","items":{"properties":{"path":{}},"required":["path"]}}},"patternProperties":{"^x-":{}}}';
    expect(hide(schema, [deny('path')])).toEqual({ shown: '{"properties":{"edits":{"type":"array","items":{"properties":{"path":{}},"required":["path"]}}},"patternProperties":{"^x-":{}}}' });
  });

  it('follows internal references that apply to the same arguments', () => {
    expect(hide('{"properties":{"mode":{}},"allOf":[{"$ref":"#/$defs/b"}],"$defs":{"b":{"anyOf":[{"required":["mode"]}]}}}', [deny('mode')])).toMatchObject({ refused: expect.stringMatching(/at \/\$defs\/b\/anyOf\/0/) });
    expect(hide('{"properties":{"mode":{}},"allOf":[{"$ref":"#/$defs/b"}],"$defs":{"b":{"required":["a"]}}}', [deny('mode')])).toHaveProperty('shown');
  });
});

describe('a schema must be self-contained', () => {
  it.each([
    ['{"properties":{"a":{"$ref":"other.json#/x"}}}', /\$ref at \/properties\/a\/\$ref points outside/],
    ['{"properties":{"enum":{"$ref":"https://x.example/s"}}}', /\$ref at \/properties\/enum\/\$ref/],
    ['{"x-vendor":{"deep":{"$dynamicRef":"https://x.example/s#m"}}}', /\$dynamicRef at \/x-vendor\/deep\/\$dynamicRef/],
    ['{"$schema":"https://x.example/meta"}', /\$schema at \/\$schema is not a JSON Schema dialect URL/],
    ['{"$ref":42}', /\$ref at \/\$ref points outside/],
  ])('refuses %s', (schema, reason) => {
    expect(externalReference(json(schema))).toMatch(reason);
  });

  it('accepts internal references, the standard dialects, and "$ref" as data', () => {
    expect(externalReference(json('{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{}}}'))).toBeUndefined();
    expect(externalReference(json('{"$schema":"https://json-schema.org/draft/2020-12/schema","enum":[{"$ref":"https://x.example"}],"default":{"$ref":"http://y"}}'))).toBeUndefined();
  });
});

describe("the server's annotations against the operator's kind", () => {
  const tool = (annotations: string) => json(`{"name":"t","annotations":${annotations}}`);
  it('a destructive hint disputes every lesser kind, even beside a read-only hint', () => {
    expect(disputingHints(tool('{"destructiveHint":true,"readOnlyHint":true}'), 'read')).toEqual(['destructiveHint']);
    expect(disputingHints(tool('{"destructiveHint":true}'), 'remote-change')).toEqual(['destructiveHint']);
    expect(disputingHints(tool('{"destructiveHint":true}'), 'destructive')).toEqual([]);
  });
  it('readOnlyHint false disputes read; with openWorldHint true it disputes a local change too', () => {
    expect(disputingHints(tool('{"readOnlyHint":false}'), 'read')).toEqual(['readOnlyHint']);
    expect(disputingHints(tool('{"readOnlyHint":false}'), 'local-change')).toEqual([]);
    expect(disputingHints(tool('{"readOnlyHint":false,"openWorldHint":true}'), 'local-change')).toEqual(['readOnlyHint', 'openWorldHint']);
  });
  it('a relaxing hint or a missing one claims nothing (values that are not booleans: hint-values.test.ts)', () => {
    expect(hintClaim(tool('{"readOnlyHint":true,"destructiveHint":false}')).atLeast).toBeUndefined();
    expect(hintClaim(json('{"name":"t"}')).atLeast).toBeUndefined();
    expect(hintClaim(tool('{"openWorldHint":true}')).atLeast).toBeUndefined();
  });
  it("proposes the server's claim, and destructive when it makes none", () => {
    expect(proposedKind(json('{"name":"t"}'))).toEqual({ kind: 'destructive', from: 'defaults' });
    expect(proposedKind(tool('{"readOnlyHint":true,"openWorldHint":false}')).kind).toBe('read');
    expect(proposedKind(tool('{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":false}')).kind).toBe('local-change');
    expect(proposedKind(tool('{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":true}')).kind).toBe('remote-change');
    expect(proposedKind(tool('{"readOnlyHint":true,"destructiveHint":true}')).kind).toBe('destructive');
  });
});
