import { WardenError } from '../error.js';
import { disputingHints, hintClaim } from '../rules/hints.js';
import { DEFAULT_ASK_SECONDS, KINDS, decisionFor, parseRules, ruleOf, type Kind, type KindDecision, type Rules } from '../rules/schema.js';
import { toolVerdict } from '../rules/verdict.js';
import { loadLocks } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, serverById } from '../store/servers.js';
import { rulesPin, type RulesPin } from '../supervise/rules-pin.js';

// What `mcp-warden rules <id>` shows: the mode, the policy per kind (defaults marked), and for every tool of the
// server's lock what its rule and the policy make of it. Computed offline from servers.json and the locks:
// tools.lock keeps each tool object as the server listed it when it was locked, so the server's annotations
// (its claim) are known without launching it. A session judges the tools as they are served then; for a tool
// that matches its lock (the only kind a session admits in enforce posture) that is the same object.

export interface ToolRuleView {
  name: string;
  /** The operator's classification (absent: unclassified). */
  kind?: Kind;
  /** What a session makes of the tool: listed and called freely, listed and asked about, or withheld. */
  decision: 'allow' | 'ask' | 'withhold';
  /** Why it is withheld (the call_refused reason code), and in words. */
  reason?: string;
  detail?: string;
  /** The least dangerous kind the server's annotations allow (its claim), and the annotation names behind it. */
  claim?: { atLeast: Kind; hints: string[] };
  /** The hints that dispute the operator's kind, and whether the rule accepts that (allowHintMismatch). */
  hintMismatch?: { hints: string[]; accepted: boolean };
  /** The operator's description replaces the server's (the server's is never shown here). */
  descriptionOverridden: boolean;
  deny: string[];
  /** The operator's fixed values. */
  fixed: Record<string, unknown>;
}

export interface RulesView {
  server: string;
  /** False: the server has no `rules` object (the lock alone decides; what follows are the defaults). */
  hasRules: boolean;
  mode: 'strict' | 'open';
  policy: Record<Kind, { decision: KindDecision; default: boolean }>;
  askTimeoutSeconds: { value: number; default: boolean };
  pin: RulesPin;
  /** Every tool of the server's tools.lock entry, in the lock's order. */
  tools: ToolRuleView[];
  /** Rules for tools the lock does not have (a typo, most likely, or a tool not locked yet). */
  notInLock: { name: string; kind: Kind }[];
}

/** The view of server `id`'s rules (its lock must exist: the tools come from it). */
export function rulesView(paths: HomePaths, id: string): RulesView {
  const server = serverById(loadServers(paths), id, paths);
  const locks = loadLocks(paths);
  const entry = locks.tools.get(id);
  if (!entry) throw new WardenError('LOCK_MISSING', `tools.lock has no entry for server '${id}', so there are no tools to show rules for. Capture one with: mcp-warden lock ${id}`);
  const rules: Rules = server.rules ?? parseRules({});
  const policy = Object.fromEntries(KINDS.map((k) => [k, { decision: decisionFor(rules, k), default: rules.policy[k] === undefined }])) as RulesView['policy'];
  const tools = entry.tools.map(({ name, tool }): ToolRuleView => {
    const rule = ruleOf(rules, name);
    // Without a rules object a session does not apply rules at all: every tool the lock approves is allowed.
    const verdict = server.rules ? toolVerdict(rules, name, tool) : { decision: 'allow' as const };
    const claim = hintClaim(tool);
    const disputing = rule ? disputingHints(tool, rule.kind) : [];
    return {
      name,
      ...(rule ? { kind: rule.kind } : {}),
      decision: verdict.decision,
      ...(verdict.decision === 'withhold' ? { reason: verdict.reason, detail: verdict.detail } : {}),
      ...(claim.atLeast ? { claim: { atLeast: claim.atLeast, hints: claim.hints } } : {}),
      ...(disputing.length > 0 ? { hintMismatch: { hints: disputing, accepted: rule?.allowHintMismatch === true } } : {}),
      descriptionOverridden: rule?.description !== undefined,
      deny: rule?.deny ?? [],
      fixed: rule?.fixed ?? {},
    };
  });
  const locked = new Set(entry.tools.map((t) => t.name));
  const notInLock = Object.entries(rules.tools).filter(([name]) => !locked.has(name)).map(([name, r]) => ({ name, kind: r.kind }));
  return {
    server: id,
    hasRules: server.rules !== undefined,
    mode: rules.mode,
    policy,
    askTimeoutSeconds: { value: rules.askTimeoutSeconds, default: rules.askTimeoutSeconds === DEFAULT_ASK_SECONDS },
    pin: rulesPin(server, locks.warden.get(id)),
    tools,
    notInLock,
  };
}
