import * as v from 'valibot';
import { fromPlain } from '../protocol/json/canonical.js';
import { objectRecord } from '../schema/own-record.js';
import { hashOf } from '../surface/hash.js';

// The operator's rules for one server (the `rules` object of a server in servers.json; docs/formats.md): what
// each tool does, as the operator says it, and what a call of each kind may do. The server's own claims
// (annotations) never enter here: they can only dispute a classification (rules/hints.ts).

export const KINDS = ['read', 'local-change', 'remote-change', 'destructive'] as const;
export type Kind = (typeof KINDS)[number];
export const DECISIONS = ['allow', 'deny', 'ask'] as const;
export type KindDecision = (typeof DECISIONS)[number];

/** What each kind may do when `policy` does not say (docs/formats.md): reads and local changes run, a change
 *  elsewhere or a destructive one asks the user first. */
export const DEFAULT_POLICY: Readonly<Record<Kind, KindDecision>> = { read: 'allow', 'local-change': 'allow', 'remote-change': 'ask', destructive: 'ask' };
/** How long a held call waits for the user's answer to an `ask` (seconds). */
export const DEFAULT_ASK_SECONDS = 120;

const decision = v.picklist(DECISIONS, `expected one of ${DECISIONS.join(', ')}`);
const parameterName = v.pipe(v.string(), v.minLength(1, 'expected a parameter name'), v.maxLength(256, 'expected a parameter name of at most 256 characters'));

/** A value servers.json can hold exactly: JSON.parse has read it, so a number beyond what a double keeps
 *  exactly would reach the server as another number than the operator wrote. */
function exactJson(value: unknown, depth = 0): string | undefined {
  if (depth > 32) return 'nested deeper than 32 levels';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return 'a number JSON cannot carry';
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) return `the integer ${value} is beyond 2^53: servers.json is read as doubles, so the server would not get the digits written`;
    return undefined;
  }
  if (Array.isArray(value)) return value.map((x) => exactJson(x, depth + 1)).find((r) => r !== undefined);
  if (value && typeof value === 'object') return Object.values(value).map((x) => exactJson(x, depth + 1)).find((r) => r !== undefined);
  return undefined;
}

const fixedValue = v.pipe(
  v.unknown(),
  v.check((x) => x !== undefined, 'expected a JSON value'),
  v.check((x) => exactJson(x) === undefined, (issue) => `cannot fix this value: ${exactJson(issue.input) ?? ''}`),
);

const toolRuleSchema = v.pipe(
  v.strictObject({
    kind: v.picklist(KINDS, `expected a kind: ${KINDS.join(', ')}`),
    /** The server's annotations may claim more danger than `kind`; true accepts that (audited at each session). */
    allowHintMismatch: v.optional(v.boolean()),
    /** Shown to the client in place of the server's description (the lock still pins the server's own). */
    description: v.optional(v.pipe(v.string(), v.minLength(1, 'expected a description'), v.maxLength(65_536, 'expected a description of at most 64 KiB'))),
    /** Parameters the client may not send; hidden from the schema it is shown. */
    deny: v.optional(v.pipe(v.array(parameterName), v.check((a) => new Set(a).size === a.length, 'a parameter is named twice'))),
    /** Parameters the warden sets itself on every call; hidden from the schema the client is shown. */
    fixed: v.optional(objectRecord(parameterName, fixedValue)),
  }),
  v.check((r) => !(r.deny ?? []).some((p) => r.fixed !== undefined && Object.hasOwn(r.fixed, p)), 'a parameter is both denied and fixed; keep one'),
);

export const rulesSchema = v.strictObject({
  /** strict: only classified tools are listed and callable; open (default): unclassified tools follow the lock. */
  mode: v.optional(v.picklist(['strict', 'open'], 'expected strict or open'), 'open'),
  policy: v.optional(
    v.strictObject({
      read: v.optional(decision),
      'local-change': v.optional(decision),
      'remote-change': v.optional(decision),
      destructive: v.optional(decision),
    }),
    {},
  ),
  tools: v.optional(objectRecord(v.pipe(v.string(), v.minLength(1, 'expected a tool name')), toolRuleSchema), {}),
  askTimeoutSeconds: v.optional(v.pipe(v.number(), v.integer('expected whole seconds'), v.minValue(1, 'expected at least 1 second'), v.maxValue(3600, 'expected at most 3600 seconds')), DEFAULT_ASK_SECONDS),
});

export type Rules = v.InferOutput<typeof rulesSchema>;
export type ToolRule = v.InferOutput<typeof toolRuleSchema>;
export type RulesInput = v.InferInput<typeof rulesSchema>;

/** Parses a rules object (throws valibot's ValiError; callers that read files get precise paths from the file loader). */
export function parseRules(input: unknown): Rules {
  return v.parse(rulesSchema, input);
}

/** The decision for a kind on this server. */
export function decisionFor(rules: Rules, kind: Kind): KindDecision {
  return rules.policy[kind] ?? DEFAULT_POLICY[kind];
}

/** The rule of one tool, or undefined (own keys only: a tool may be named "constructor"). */
export function ruleOf(rules: Rules, tool: string): ToolRule | undefined {
  return Object.hasOwn(rules.tools, tool) ? rules.tools[tool] : undefined;
}

/** What warden.lock pins: the tagged sha256 of the rules' RFC 8785 form, with every default filled in (so that
 *  writing a default out, or leaving it out, is not a change). */
export function rulesHash(rules: Rules): string {
  return hashOf(fromPlain(rules));
}
