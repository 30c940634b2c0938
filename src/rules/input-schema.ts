import { pointer, type JsonObject, type JsonValue } from '../protocol/json/reader.js';

// What the operator's rules do to a tool's schemas (seed 003, "Narrowing what the model can send"):
// - a schema must be self-contained: a `$ref`/`$dynamicRef` that leaves the document, or a `$schema` that is not
//   one of JSON Schema's own, is refused before anything (the client, a validator) could fetch it;
// - a denied or fixed parameter disappears from the input schema the client is shown, which is sound only when
//   nothing else that applies to the same arguments object refers to it: such a schema is refused, never partly
//   rewritten. The one rewrite beyond `properties` is the top-level `required` of a *fixed* parameter: the warden
//   supplies it, so the client is rightly not asked to.

const STANDARD_DIALECTS = new Set(
  ['json-schema.org/draft/2020-12/schema', 'json-schema.org/draft/2019-09/schema', 'json-schema.org/draft-07/schema', 'json-schema.org/draft-06/schema', 'json-schema.org/draft-04/schema'].flatMap(
    (u) => [`https://${u}`, `http://${u}`, `https://${u}#`, `http://${u}#`],
  ),
);

/** Keywords whose value is a map of names to subschemas. */
/** The longest patternProperties pattern this warden runs against a hidden parameter's name. */
const MAX_PATTERN = 256;

/** How many quantifiers (`*`, `+`, `?`, `{`) a regular expression has outside escapes and character classes
 *  (a `?` that opens a group's syntax, `(?:`, is not one; a lazy `*?` counts twice, which only errs strict). */
export function quantifiers(pattern: string): number {
  let n = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (c === '[') {
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
    } else if (c === '*' || c === '+' || c === '{' || (c === '?' && pattern[i - 1] !== '(')) n++;
  }
  return n;
}

const NAMED_SUBSCHEMAS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);
/** Keywords whose value is data, never a schema: not searched for references. */
const DATA = new Set(['enum', 'const', 'default', 'examples']);


/**
 * Calls `visit` on every object in schema position (keyword-aware: the keys of `properties` and the like are
 * names, not keywords; the values of `enum`, `const`, `default`, `examples` are data). Under a keyword this code
 * does not know, every object is taken as a schema, so a reference there is still seen (a lenient client might
 * follow it). Stops at the first answer `visit` gives. `at` is the path of the node, as segments (a pointer is
 * only made for an answer: making one per node was most of the walk's cost).
 */
function walkSchemas<T>(node: JsonValue | undefined, at: string[], visit: (node: JsonObject, at: readonly string[]) => T | undefined): T | undefined {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      at.push(String(i));
      const r = walkSchemas(node[i], at, visit);
      at.pop();
      if (r !== undefined) return r;
    }
    return undefined;
  }
  if (!(node instanceof Map)) return undefined;
  const own = visit(node, at);
  if (own !== undefined) return own;
  for (const [key, value] of node) {
    if (DATA.has(key) || (typeof value !== 'object' || value === null)) continue;
    at.push(key);
    let r: T | undefined;
    if (NAMED_SUBSCHEMAS.has(key) && value instanceof Map) {
      for (const [name, sub] of value) {
        at.push(name);
        r = walkSchemas(sub, at, visit);
        at.pop();
        if (r !== undefined) break;
      }
    } else r = walkSchemas(value, at, visit);
    at.pop();
    if (r !== undefined) return r;
  }
  return undefined;
}

/** Why the schema is not self-contained (with the JSON pointer of the offending keyword), or undefined. */
export function externalReference(schema: JsonValue | undefined): string | undefined {
  return walkSchemas(schema, [], (node, at) => {
    for (const key of REFERENCES) {
      const value = node.get(key);
      if (value !== undefined && (typeof value !== 'string' || !value.startsWith('#'))) return `${key} at ${pointer([...at, key])} points outside the schema`;
    }
    // A member of `properties` (or the like) is a schema: an object or a boolean. Anything else is no schema, and a
    // dereferencer that resolves every {"$ref": "…"} wherever it sits would fetch {"properties":{"$ref":"https://…"}}.
    for (const key of NAMED_SUBSCHEMAS) {
      const map = node.get(key);
      if (!(map instanceof Map)) continue;
      for (const [name, sub] of map) {
        const isSchema = sub instanceof Map || typeof sub === 'boolean' || (key === 'dependencies' && Array.isArray(sub));
        if (!isSchema) return `${pointer([...at, key, name])} is not a schema (a ${sub === null ? 'null' : Array.isArray(sub) ? 'list' : typeof sub === 'string' ? 'string' : 'number'})`;
      }
    }
    const dialect = node.get('$schema');
    if (dialect !== undefined && (typeof dialect !== 'string' || !STANDARD_DIALECTS.has(dialect))) return `$schema at ${pointer([...at, '$schema'])} is not a JSON Schema dialect URL`;
    return undefined;
  });
}

/** A parameter to hide, and whether the warden supplies it (fixed) or refuses it (denied). */
export interface Hidden {
  name: string;
  fixed: boolean;
}

export type HideResult = { schema: JsonObject } | { refused: string };

const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf'];
const SUBSCHEMA_VALUES = ['not', 'if', 'then', 'else'];

/** Resolves an internal reference ("#", "#/a/b") to a subschema of `root`; undefined when it is another form
 *  (an anchor) or does not resolve. */
function resolvePointer(root: JsonObject, ref: string): { node: JsonValue; pointer: string } | undefined {
  if (ref === '#') return { node: root, pointer: '' };
  if (!ref.startsWith('#/')) return undefined;
  let node: JsonValue = root;
  for (const raw of ref.slice(2).split('/')) {
    // Percent-escapes are decoded before the split by some validators and after it by others (Python's
    // jsonschema, Ajv): such a pointer names two nodes, so it is not followed.
    if (raw.includes('%')) return undefined;
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node instanceof Map && node.has(token)) node = node.get(token) as JsonValue;
    else if (Array.isArray(node) && /^(0|[1-9][0-9]*)$/.test(token) && Number(token) < node.length) node = node[Number(token)] as JsonValue;
    else return undefined;
  }
  return { node, pointer: ref.slice(1) };
}

const REFERENCES = ['$ref', '$dynamicRef', '$recursiveRef'];
const ANCHORS = ['$anchor', '$dynamicAnchor', '$recursiveAnchor'];

/**
 * Why hiding `names` would change what a reference elsewhere in the document means, or undefined: a reference to
 * the root ("#", "#/", `$recursiveRef`, or an anchor form when the root has an anchor) would have nested objects
 * lose the names too; one into a removed member (`#/properties/NAME…`) would dangle; one with percent-escapes
 * names two nodes (see resolvePointer).
 */
function referenceProblem(root: JsonObject, names: ReadonlySet<string>): string | undefined {
  const rootAnchored = ANCHORS.some((k) => root.has(k));
  return walkSchemas(root, [], (node, at) => {
    for (const key of REFERENCES) {
      const ref = node.get(key);
      if (typeof ref !== 'string') continue;
      const where = pointer([...at, key]);
      if (key === '$recursiveRef' || ref === '#' || ref === '#/' || (rootAnchored && ref.startsWith('#') && !ref.startsWith('#/'))) {
        return `its input schema refers to itself (${key} at ${where}), so hiding a top-level parameter would change nested objects too`;
      }
      if (!ref.startsWith('#/')) continue;
      if (ref.includes('%')) return `its input schema has a reference with percent-escapes (${where}), which validators resolve differently`;
      const [first, second] = ref.slice(2).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
      if (first === 'properties' && second !== undefined && names.has(second)) return `its input schema refers into the hidden parameter "${second}" (${key} at ${where}); the reference would dangle`;
    }
    return undefined;
  });
}

/**
 * Why hiding `hidden` from `root` would be unsound (a refusal the tool carries), or the schema the client is
 * shown. Walks every subschema that applies to the same arguments object as the root (combinators, conditionals,
 * dependent schemas, internal references) and refuses when one of them names, requires, pattern-matches or
 * constrains a hidden name.
 */
export function hideParameters(root: JsonObject, hidden: readonly Hidden[]): HideResult {
  if (hidden.length === 0) return { schema: root };
  const names = new Set(hidden.map((h) => h.name));
  const fixed = new Set(hidden.filter((h) => h.fixed).map((h) => h.name));
  const problem = referenceProblem(root, names);
  if (problem) return { refused: problem };
  const seen = new Set<JsonObject>();
  const pending: { node: JsonValue; at: string }[] = [{ node: root, at: '' }];
  while (pending.length > 0) {
    const { node, at } = pending.pop() as { node: JsonValue; at: string };
    if (!(node instanceof Map) || seen.has(node)) continue;
    seen.add(node);
    const isRoot = node === root;
    const where = at || 'the top level';
    const mentioned = (name: string, how: string): HideResult => ({ refused: `its input schema ${how} the hidden parameter "${name}" at ${where}; hiding it would leave the rest of the schema wrong` });
    if (!isRoot && node.has('$id')) return { refused: `its input schema has an embedded resource ($id at ${where}); its references cannot be followed here` };
    const properties = node.get('properties');
    if (!isRoot && properties instanceof Map) for (const n of names) if (properties.has(n)) return mentioned(n, 'declares again');
    // Whole argument objects given as data (a default the client fills in, an example the model copies, a const
    // or enum every call must match) that carry a hidden name.
    for (const key of ['const', 'default', 'enum', 'examples']) {
      const data = node.get(key);
      const objects = Array.isArray(data) && key !== 'const' && key !== 'default' ? data : [data];
      for (const o of objects) if (o instanceof Map) for (const n of names) if (o.has(n)) return mentioned(n, `names in its ${key}`);
    }
    for (const key of ['minProperties', 'maxProperties']) {
      if (node.has(key)) return { refused: `its input schema bounds how many parameters a call has (${key} at ${where}), which a hidden parameter would miscount` };
    }
    const required = node.get('required');
    if (Array.isArray(required)) for (const n of names) if (required.includes(n) && !(isRoot && fixed.has(n))) return mentioned(n, 'requires');
    for (const key of ['dependentRequired', 'dependentSchemas', 'dependencies']) {
      const deps = node.get(key);
      if (!(deps instanceof Map)) continue;
      for (const [k, v] of deps) {
        for (const n of names) if (k === n || (Array.isArray(v) && v.includes(n))) return mentioned(n, `has ${key} on`);
        if (key !== 'dependentRequired' && v instanceof Map) pending.push({ node: v, at: `${at}/${key}${pointer([k])}` });
      }
    }
    const patterns = node.get('patternProperties');
    if (patterns instanceof Map) {
      for (const p of patterns.keys()) {
        // The pattern is the server's, and V8's engine backtracks: two quantifiers can take it minutes on a short
        // name (test/attack12/schema-pattern). One, over an operator's parameter name, is a short loop.
        if (p.length > MAX_PATTERN || quantifiers(p) > 1) {
          return { refused: `its input schema has a patternProperties pattern at ${where} too complex for this warden to run (over ${MAX_PATTERN} characters or more than one quantifier), so it cannot tell whether it matches a hidden parameter` };
        }
        let re: RegExp;
        try {
          re = new RegExp(p, 'u');
        } catch {
          return { refused: `its input schema has a patternProperties pattern at ${where} this warden cannot read, so it cannot tell whether it matches a hidden parameter` };
        }
        for (const n of names) if (re.test(n)) return mentioned(n, 'matches a pattern of patternProperties to');
      }
    }
    if (node.has('propertyNames')) return { refused: `its input schema constrains parameter names (propertyNames at ${where}), which would still apply to a hidden parameter` };
    if (!isRoot && (node.has('additionalProperties') || node.has('unevaluatedProperties'))) return { refused: `its input schema constrains undeclared parameters in a subschema (${where}), which would apply to a hidden parameter` };
    for (const key of SUBSCHEMA_LISTS) {
      const list = node.get(key);
      if (Array.isArray(list)) list.forEach((s, i) => pending.push({ node: s, at: `${at}/${key}/${i}` }));
    }
    for (const key of SUBSCHEMA_VALUES) if (node.has(key)) pending.push({ node: node.get(key) as JsonValue, at: `${at}/${key}` });
    for (const key of ['$ref', '$dynamicRef']) {
      const ref = node.get(key);
      if (ref === undefined) continue;
      const target = key === '$ref' && typeof ref === 'string' ? resolvePointer(root, ref) : undefined;
      if (!target) return { refused: `its input schema has a reference at ${where} this warden cannot follow (${key}), so it cannot tell whether it names a hidden parameter` };
      pending.push({ node: target.node, at: target.pointer });
    }
  }
  const shown = new Map(root);
  const properties = root.get('properties');
  if (properties instanceof Map) shown.set('properties', new Map([...properties].filter(([k]) => !names.has(k))));
  const required = root.get('required');
  if (Array.isArray(required)) {
    const kept = required.filter((r) => typeof r !== 'string' || !fixed.has(r));
    if (kept.length > 0) shown.set('required', kept);
    else shown.delete('required');
  }
  return { schema: shown };
}
