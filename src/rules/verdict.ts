import { fromPlain } from '../protocol/json/canonical.js';
import type { JsonObject, JsonValue } from '../protocol/json/reader.js';
import { disputingHints } from './hints.js';
import { externalReference, hideParameters, type Hidden } from './input-schema.js';
import { decisionFor, ruleOf, type Kind, type Rules } from './schema.js';

// What the operator's rules make of one tool as the server listed it: whether the client sees it, as what, and
// what a call of it must go through. Computed from the server's own tool object (the one the lock judged), so
// the lock keeps pinning the server's description and schema underneath whatever the client is shown.

/** Why a tool is not listed and its calls are refused (the `reason` of the call_refused event). */
export type WithheldReason = 'unclassified' | 'hint_mismatch' | 'kind_denied' | 'schema_refused';

export type ToolVerdict =
  | { name: string; decision: 'withhold'; reason: WithheldReason; detail: string; kind?: Kind }
  | {
      name: string;
      decision: 'allow' | 'ask';
      /** Undefined for an unclassified tool of an `open` server (it follows the lock alone). */
      kind?: Kind;
      /** The hints that dispute the kind and that the rule accepts (allowHintMismatch). */
      override: string[];
      /** The tool as the client is shown it, when the rules change it (description, hidden parameters). */
      shown?: JsonObject;
      deny: ReadonlySet<string>;
      fixed: ReadonlyMap<string, JsonValue>;
    };

const NONE: ReadonlySet<string> = new Set();
const NO_FIXED: ReadonlyMap<string, JsonValue> = new Map();

export function toolVerdict(rules: Rules, name: string, tool: JsonObject): ToolVerdict {
  for (const field of ['inputSchema', 'outputSchema']) {
    const outside = externalReference(tool.get(field));
    if (outside) return { name, decision: 'withhold', reason: 'schema_refused', detail: `its ${field} is not self-contained: ${outside}` };
  }
  const rule = ruleOf(rules, name);
  if (!rule) {
    if (rules.mode === 'strict') return { name, decision: 'withhold', reason: 'unclassified', detail: 'it has no rule and the server is in strict mode' };
    return { name, decision: 'allow', override: [], deny: NONE, fixed: NO_FIXED };
  }
  const { kind } = rule;
  const disputing = disputingHints(tool, kind);
  if (disputing.length > 0 && rule.allowHintMismatch !== true) {
    return { name, kind, decision: 'withhold', reason: 'hint_mismatch', detail: `the operator classified it ${kind} and the server's ${disputing.join(' and ')} claim${disputing.length === 1 ? 's' : ''} more (allowHintMismatch would accept it)` };
  }
  const decision = decisionFor(rules, kind);
  if (decision === 'deny') return { name, kind, decision: 'withhold', reason: 'kind_denied', detail: `the policy for ${kind} tools is deny` };
  const deny = new Set(rule.deny ?? []);
  const fixed = new Map(Object.entries(rule.fixed ?? {}).map(([k, v]) => [k, fromPlain(v)]));
  const hidden: Hidden[] = [...[...deny].map((n) => ({ name: n, fixed: false })), ...[...fixed.keys()].map((n) => ({ name: n, fixed: true }))];
  let shown: JsonObject | undefined;
  if (hidden.length > 0) {
    const schema = tool.get('inputSchema');
    if (!(schema instanceof Map)) return { name, kind, decision: 'withhold', reason: 'schema_refused', detail: 'it has denied or fixed parameters and no input schema object to hide them from' };
    const hid = hideParameters(schema, hidden);
    if ('refused' in hid) return { name, kind, decision: 'withhold', reason: 'schema_refused', detail: hid.refused };
    shown = new Map(tool);
    shown.set('inputSchema', hid.schema);
  }
  if (rule.description !== undefined) {
    shown ??= new Map(tool);
    shown.set('description', rule.description);
  }
  return { name, kind, decision, override: disputing, ...(shown ? { shown } : {}), deny, fixed };
}
