import { describe, expect, it } from 'vitest';
import { readJson, type JsonObject } from '../../src/protocol/json/reader.js';
import { serialize } from '../../src/protocol/json/write.js';
import { externalReference, hideParameters, type Hidden } from '../../src/rules/input-schema.js';

// Schema shapes that still refer to, or constrain, a parameter the rules hide, and a reference the
// self-containment search does not see. Each is shown to the client today (hideParameters returns a schema,
// externalReference returns undefined); the contract (ADR 0022, 4 and 5) is that such a tool is withheld.

const json = (text: string): JsonObject => readJson(Buffer.from(text), { maxBytes: 1 << 20, maxDepth: 64 }) as JsonObject;
const deny = (name: string): Hidden => ({ name, fixed: false });
const fix = (name: string): Hidden => ({ name, fixed: true });
const hide = (schema: string, hidden: Hidden[]): { refused: string } | { shown: string } => {
  const r = hideParameters(json(schema), hidden);
  return 'refused' in r ? { refused: r.refused } : { shown: serialize(r.schema) };
};

describe('hiding is refused when anything else in the schema refers to or constrains the hidden name', () => {
  it('refuses when another property $refs the hidden parameter\'s own subschema (it would dangle)', () => {
    // Attack: "#/properties/mode" is a pointer into the very member that hiding removes. The walk follows
    // references only from subschemas that apply to the arguments object, never from nested properties, and
    // never asks whether a reference points into what is removed: the client is shown
    // {"properties":{"copy":{"$ref":"#/properties/mode"}}}, a reference to nothing (a strict validator fails
    // to compile the tool's schema; a lenient one may look further afield).
    expect(hide('{"type":"object","properties":{"mode":{"type":"string","enum":["safe","unsafe"]},"copy":{"$ref":"#/properties/mode"}}}', [deny('mode')])).toHaveProperty('refused');
    expect(hide('{"type":"object","properties":{"path":{"type":"string"},"items":{"type":"array","items":{"$ref":"#/properties/path"}}},"required":["path"]}', [fix('path')])).toHaveProperty('refused');
  });

  it('refuses when a $ref whose fragment carries %2F leads a validator to a subschema that requires the hidden name', () => {
    // Attack: implementations disagree on "%2F" in a pointer fragment. resolvePointer (like Ajv 8) splits
    // first and decodes each token: $defs["x/y"], a harmless decoy. Python's jsonschema 4.26 (referencing)
    // decodes the whole fragment first and splits after: $defs.x.y, which requires "mode" (checked: it
    // reports "'mode' is a required property" for {}). A client validating with it is shown a schema that
    // still requires the parameter it can never send. A walk that cannot tell which node is meant must
    // refuse (or follow both).
    const schema = '{"type":"object","properties":{"mode":{"type":"string"},"a":{}},"allOf":[{"$ref":"#/$defs/x%2Fy"}],"$defs":{"x/y":{},"x":{"y":{"required":["mode"]}}}}';
    expect(hide(schema, [deny('mode')])).toHaveProperty('refused');
  });

  it('refuses when a nested object refers to the root with $recursiveRef (draft 2019-09), as it does for $ref "#"', () => {
    // Attack: refersToRoot knows "$ref" and "$dynamicRef" only; "$recursiveRef":"#" is the 2019-09 spelling of
    // the same thing, so hiding a top-level name changes what the nested objects accept too.
    expect(hide('{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"type":"object","properties":{"mode":{"type":"string"},"child":{"$recursiveRef":"#"}}}', [deny('mode')])).toHaveProperty('refused');
  });

  it('refuses when a nested object refers to the root through an anchor ($anchor or $dynamicAnchor at the root)', () => {
    // Attack: refersToRoot compares the reference with "#" and "#/" only; "#root" names the root through its
    // $anchor (or $dynamicAnchor), and the hiding walk never visits nested properties, where the reference
    // sits. Hiding "mode" at the top changes what every nested "child" accepts, as with $ref "#".
    expect(hide('{"$anchor":"root","type":"object","properties":{"mode":{"type":"string"},"child":{"$ref":"#root"}}}', [deny('mode')])).toHaveProperty('refused');
    expect(hide('{"$dynamicAnchor":"node","type":"object","properties":{"mode":{"type":"string"},"child":{"$dynamicRef":"#node"}}}', [deny('mode')])).toHaveProperty('refused');
  });

  it.each([
    ['a default of the arguments object sets it', '{"type":"object","properties":{"mode":{"type":"string"},"a":{}},"default":{"mode":"unsafe","a":1}}'],
    ['examples of the arguments object show it', '{"type":"object","properties":{"mode":{"type":"string"},"a":{}},"examples":[{"mode":"unsafe","a":1}]}'],
    ['a const of the arguments object requires it', '{"type":"object","properties":{"mode":{"type":"string"},"a":{}},"const":{"mode":"unsafe","a":1}}'],
    ['an enum of whole argument objects in a subschema names it', '{"type":"object","properties":{"mode":{"type":"string"},"a":{}},"anyOf":[{"enum":[{"mode":"unsafe","a":1},{"a":2}]}]}'],
  ])('refuses when %s', (_what, schema) => {
    // Attack: the data keywords are never looked at by the hiding walk. A default the client fills in, or an
    // example the model copies, carries the denied name into every call (each then refused: the tool is
    // unusable as shown); a const/enum over the whole object makes every call without the name invalid.
    expect(hide(schema, [deny('mode')])).toHaveProperty('refused');
  });

  it('refuses hiding a fixed parameter when the schema bounds how many members the arguments may have', () => {
    // Attack: the warden adds the fixed member after the client's; maxProperties (the client is shown 1) then
    // counts one more than the client could know, so a call valid against the shown schema is invalid at the
    // server. minProperties does the same the other way for a denied one.
    expect(hide('{"type":"object","properties":{"path":{"type":"string"},"q":{"type":"string"}},"maxProperties":1}', [fix('path')])).toHaveProperty('refused');
    expect(hide('{"type":"object","properties":{"mode":{"type":"string"},"q":{"type":"string"}},"minProperties":2,"additionalProperties":false}', [deny('mode')])).toHaveProperty('refused');
  });
});

describe('a schema that points outside itself is withheld', () => {
  it('refuses a $recursiveRef that is not "#"', () => {
    // Attack: the search looks at "$ref" and "$dynamicRef"; "$recursiveRef" (2019-09) is a reference keyword
    // too, resolved as a URI-reference by implementations that do not special-case its value.
    expect(externalReference(json('{"type":"object","properties":{"a":{"$recursiveRef":"https://schemas.example/a.json"}}}'))).toBeDefined();
  });

  it('refuses a "$ref" string where a subschema must be (a properties member whose value is a reference string)', () => {
    // Attack: {"properties":{"$ref":"https://…"}} is not a valid schema (a properties member must be a schema),
    // but a dereferencer that resolves every {"$ref": string} object wherever it is
    // (@apidevtools/json-schema-ref-parser and its many users) fetches it. The search reads the members of
    // "properties" as names and never looks at the map itself. Refusing costs nothing: no honest schema has it.
    expect(externalReference(json('{"type":"object","properties":{"$ref":"https://schemas.example/a.json"}}'))).toBeDefined();
    expect(externalReference(json('{"type":"object","$defs":{"$ref":"https://schemas.example/b.json"}}'))).toBeDefined();
  });
});
