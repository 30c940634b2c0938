import { canonicalize } from '../protocol/json/canonical.js';
import type { JsonObject, JsonValue } from '../protocol/json/reader.js';
import { tagged } from './hash.js';

// The warden's per-tool fingerprint, all in exact-number canonical form (beyond tools.lock v1, kept in
// warden.lock): the whole tool, each top-level field, the prompt text nested anywhere below the top level
// (every string under a "description" key, with its path), and each schema's shape with that text removed.
// Together they let a diff say which fields changed and in which class, even where a double collapses digits.

export interface ToolPrint {
  hExact: string;
  fields: Record<string, string>;
  hNestedDescriptions: string;
  shapes: Record<string, string>;
}

const SCHEMA_FIELDS = ['inputSchema', 'outputSchema'];

function nestedDescriptions(v: JsonValue, path: string, out: [string, string][]): void {
  if (Array.isArray(v)) v.forEach((x, i) => nestedDescriptions(x, `${path}/${i}`, out));
  else if (v instanceof Map) {
    for (const [k, x] of v) {
      if (k === 'description' && typeof x === 'string') out.push([`${path}/description`, x]);
      else nestedDescriptions(x, `${path}/${k}`, out);
    }
  }
}

function withoutDescriptions(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(withoutDescriptions);
  if (v instanceof Map) return new Map([...v].filter(([k, x]) => !(k === 'description' && typeof x === 'string')).map(([k, x]) => [k, withoutDescriptions(x)]));
  return v;
}

/** Fingerprints one tool object. Throws CanonicalError for an uncanonicalizable value. */
export function printTool(tool: JsonObject): ToolPrint {
  const fields: Record<string, string> = {};
  const nested: [string, string][] = [];
  const shapes: Record<string, string> = {};
  for (const [k, v] of tool) {
    fields[k] = tagged(canonicalize(v, 'exact'));
    if (k !== 'description') nestedDescriptions(v, `/${k}`, nested);
    if (SCHEMA_FIELDS.includes(k)) shapes[k] = tagged(canonicalize(withoutDescriptions(v), 'exact'));
  }
  nested.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return {
    hExact: tagged(canonicalize(tool, 'exact')),
    fields,
    hNestedDescriptions: tagged(JSON.stringify(nested)),
    shapes,
  };
}
