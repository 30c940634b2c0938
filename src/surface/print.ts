import { CanonicalError, canonicalBytes, canonicalize, type Walk } from '../protocol/json/canonical.js';
import type { JsonObject, JsonValue } from '../protocol/json/reader.js';
import { hashOf, tagged } from './hash.js';

// The warden's per-tool fingerprint, all in exact-number canonical form (beyond tools.lock v1, kept in
// warden.lock): the whole tool, each top-level field, the prompt text nested anywhere below the top level
// (every string under a "description" key, with its path), and each schema's shape with that text removed.
// Together they let a diff say which fields changed and in which class, even where a double collapses digits.
// The whole-tool digests come from one canonical pass over the tool (toolDigests); the rest is computed only
// when needed.

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

export interface CanonicalTool {
  /** RFC 8785 text of the whole tool. */
  jcs: string;
  /** Exact-number canonical text of the whole tool (the same string as jcs unless a number differs). */
  exact: string;
}

/** The RFC 8785 bytes of a tool (a view valid until the next canonicalization: see canonicalBytes). A
 *  CanonicalError is the one a pass per field in arrival order meets first (the pass goes in key order). */
export function canonicalToolBytes(tool: JsonObject, w: Walk): Buffer {
  try {
    return canonicalBytes(tool, w);
  } catch (err) {
    if (err instanceof CanonicalError) for (const v of tool.values()) canonicalize(v);
    throw err;
  }
}

/** Both canonical texts of a tool, in one pass unless a number differs between them. */
export function canonicalTool(tool: JsonObject): CanonicalTool {
  const w: Walk = { mode: 'jcs', inexact: false };
  const jcs = canonicalToolBytes(tool, w).toString('utf8');
  return { jcs, exact: w.inexact ? canonicalize(tool, 'exact') : jcs };
}

/** The full fingerprint of one tool (computed only when a tool is locked or differs from its lock); `hExact`
 *  when the caller has it already. */
export function printTool(tool: JsonObject, hExact?: string): ToolPrint {
  const fields = Object.create(null) as Record<string, string>;
  const nested: [string, string][] = [];
  const shapes = Object.create(null) as Record<string, string>;
  for (const [k, v] of tool) {
    fields[k] = hashOf(v, 'exact');
    if (k !== 'description') nestedDescriptions(v, `/${k}`, nested);
    if (SCHEMA_FIELDS.includes(k)) shapes[k] = hashOf(withoutDescriptions(v), 'exact');
  }
  nested.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { hExact: hExact ?? toolDigests(tool).hExact, fields, hNestedDescriptions: tagged(JSON.stringify(nested)), shapes };
}

/** A tool's digests (tools.lock h_tool, the warden's exact digest), from one canonical pass (two when a
 *  number differs between the forms). */
export function toolDigests(tool: JsonObject): { hTool: string; hExact: string } {
  const w: Walk = { mode: 'jcs', inexact: false };
  const hTool = tagged(canonicalToolBytes(tool, w));
  return { hTool, hExact: w.inexact ? tagged(canonicalBytes(tool, { mode: 'exact', inexact: false })) : hTool };
}
