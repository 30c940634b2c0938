import { WardenError } from '../error.js';
import type { JsonValue } from '../protocol/json/reader.js';
import { proposedKind } from '../rules/hints.js';
import { parseRules, ruleOf, type Kind, type Rules } from '../rules/schema.js';
import { toolVerdict } from '../rules/verdict.js';
import { loadLocks } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, serverById } from '../store/servers.js';
import { HINTS, hintSpellings } from '../surface/hint-moves.js';
import type { LockEntry } from '../surface/lockfile.js';
import { changeRules, type RulesChange, type RulesEdit } from './rules-edit.js';

// A classification proposed from the server's own annotations, for the operator to confirm (`rules --propose`,
// and the offer `add`, `import` and `install` make once a server is locked). It is the server's claim and is
// always shown as such; it is applied only on the operator's explicit yes, and never over a rule the operator
// wrote. The tool objects are those of tools.lock (the server's listing as it was approved, digests checked when
// the lock is read): nothing is launched to propose.

export interface ProposedRule {
  name: string;
  kind: Kind;
  /** annotations: from the tool's hints; defaults: it has none, and the protocol's defaults claim the worst. */
  from: 'annotations' | 'defaults';
  /** The hints present, as NAME=true or NAME=false (any other value, or spellings of NAME that disagree:
   *  NAME=?), each read from every member spelled like it as rules/hints.ts reads it. */
  hints: string[];
  /** The operator's own classification, which the proposal leaves as it is. */
  kept?: Kind;
  /** What strict mode with this classification and the policy now would make of the tool. */
  decision: 'allow' | 'ask' | 'withhold';
  /** The call_refused reason code when it would be withheld. */
  reason?: string;
}

/** How the proposal shows hint `h`: its one boolean value, or "?" when some spelling is not that boolean. */
function shownHint(h: string, members: readonly [string, JsonValue][]): string {
  const first = members[0]?.[1];
  return `${h}=${typeof first === 'boolean' && members.every(([, v]) => v === first) ? String(first) : '?'}`;
}

/** The proposal for every tool of a lock entry, given the rules the server has now (if any). */
export function proposalFor(entry: LockEntry, rules: Rules | undefined): ProposedRule[] {
  const proposed = entry.tools.map(({ name, tool }) => {
    const { kind, from } = proposedKind(tool);
    const a = tool.get('annotations');
    const spellings = hintSpellings(a instanceof Map ? a : undefined);
    const hints = HINTS.flatMap(({ key }) => (spellings.has(key) ? [shownHint(key, spellings.get(key) as [string, JsonValue][])] : []));
    const kept = rules ? ruleOf(rules, name)?.kind : undefined;
    return { name, tool, kind, from, hints, ...(kept ? { kept } : {}) };
  });
  // The rules as applying the proposal would leave them, to say what each tool would then be.
  const after: Rules = { ...(rules ?? parseRules({})), mode: 'strict', tools: { ...(rules?.tools ?? {}) } };
  for (const p of proposed) if (!p.kept) Object.defineProperty(after.tools, p.name, { value: { kind: p.kind }, enumerable: true, writable: true, configurable: true });
  return proposed.map(({ tool, ...p }) => {
    const verdict = toolVerdict(after, p.name, tool);
    return { ...p, decision: verdict.decision, ...(verdict.decision === 'withhold' ? { reason: verdict.reason } : {}) };
  });
}

/** The proposal for server `id`, from its lock. */
export function proposeRules(paths: HomePaths, id: string): ProposedRule[] {
  const server = serverById(loadServers(paths), id, paths);
  const entry = loadLocks(paths).tools.get(id);
  if (!entry) throw new WardenError('LOCK_MISSING', `tools.lock has no entry for server '${id}', so there is nothing to propose rules for. Capture one with: mcp-warden lock ${id}`);
  return proposalFor(entry, server.rules);
}

/** Applies a confirmed proposal: strict mode, and the proposed kind for every tool that has no rule yet. */
export function applyProposal(paths: HomePaths, id: string, proposal: readonly ProposedRule[], pin: boolean): Promise<RulesChange> {
  const edits: RulesEdit[] = [{ op: 'mode', mode: 'strict' }, ...proposal.filter((p) => !p.kept).map((p): RulesEdit => ({ op: 'kind', tool: p.name, kind: p.kind }))];
  return changeRules(paths, id, edits, pin);
}
