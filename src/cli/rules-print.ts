import type { ProposedRule } from '../enroll/rules-propose.js';
import type { RulesView, ToolRuleView } from '../enroll/rules-view.js';
import type { RulesChange } from '../enroll/rules-edit.js';
import { KINDS } from '../rules/schema.js';
import { escaped, line, printTable, shortSha } from './output.js';

// Printing the operator's rules (`mcp-warden rules`): for a human, and as one stable JSON object for scripts.
// Tool names are the server's text and are escaped; the server's descriptions are never printed (an override is
// said to exist); fixed values are the operator's own and are shown.

const hash = (h: string | undefined): string => (h ? `${shortSha(h)}…` : 'none');

/** The command a line of advice names (with --home when the verb was given one). */
export function command(homeFlag: string | undefined, home: string, rest: string): string {
  return `mcp-warden${homeFlag ? ` --home ${home}` : ''} ${rest}`;
}

function pinLine(v: RulesView, cmd: (rest: string) => string): string {
  const { state, now, pinned } = v.pin;
  switch (state) {
    case 'none':
      return `Server '${v.server}' has no rules: every tool its lock approves is listed and callable. Below, what the defaults of a rules object would make of each tool.`;
    case 'pinned':
      return `Rules ${hash(now)} of server '${v.server}', as pinned in warden.lock.`;
    case 'changed':
      return `The rules of server '${v.server}' (${hash(now)}) DIFFER from the ones pinned in warden.lock (${hash(pinned)}): changed outside the CLI. Review them below, then pin them: ${cmd(`rules ${v.server} --pin`)}`;
    case 'added':
      return `The rules of server '${v.server}' (${hash(now)}) were never pinned in warden.lock. Review them below, then pin them: ${cmd(`rules ${v.server} --pin`)}`;
    case 'removed':
      return `Server '${v.server}' has no rules now, but warden.lock pinned some (${hash(pinned)}): removed outside the CLI. To accept that: ${cmd(`rules ${v.server} --pin`)}`;
  }
}

/** Rows without their empty last cells (no trailing blanks). */
function trimmed(rows: string[][]): string[][] {
  const width = Math.max(...rows.map((r) => r.length));
  return rows.map((r) => (r.at(-1) === '' && width > 1 ? r.slice(0, -1) : r));
}

function fixedText(fixed: Record<string, unknown>): string {
  return Object.entries(fixed).map(([k, val]) => `${escaped(k)}=${escaped(JSON.stringify(val))}`).join(', ');
}

function notes(t: ToolRuleView): string {
  const out: string[] = [];
  if (t.hintMismatch) {
    const claim = `the server's ${t.hintMismatch.hints.join(' and ')} claim${t.hintMismatch.hints.length === 1 ? 's' : ''} ${t.claim?.atLeast ?? 'more'}`;
    out.push(t.hintMismatch.accepted ? `hint mismatch accepted (${claim})` : `hint mismatch: ${claim}; accept it with --allow-hint-mismatch ${escaped(t.name)}, or classify it ${t.claim?.atLeast ?? 'higher'}`);
  }
  if (t.reason === 'schema_refused' && t.detail) out.push(escaped(t.detail.slice(0, 200)));
  if (t.descriptionOverridden) out.push('description overridden');
  if (t.deny.length > 0) out.push(`denied: ${t.deny.map(escaped).join(', ')}`);
  if (Object.keys(t.fixed).length > 0) out.push(`fixed: ${fixedText(t.fixed)}`);
  return out.join('; ');
}

/** The rules of one server for a human. */
export function printRulesView(v: RulesView, cmd: (rest: string) => string): void {
  line(escaped(pinLine(v, cmd)));
  line(`Mode: ${v.mode}${v.mode === 'strict' ? ' (only classified tools are listed and callable)' : ' (unclassified tools follow the lock alone)'}`);
  line('Policy, what a call of each kind may do:');
  printTable(trimmed(KINDS.map((k) => [`  ${k}`, v.policy[k].decision, v.policy[k].default ? '(default)' : ''])));
  line(`Ask timeout: ${v.askTimeoutSeconds.value} s${v.askTimeoutSeconds.default ? ' (default)' : ''}`);
  line(`Tools of the lock (${v.tools.length}); hints are the server's annotations as locked:`);
  const rows = v.tools.map((t) => [`  ${escaped(t.name)}`, t.kind ?? 'unclassified', t.decision === 'withhold' ? `withheld (${t.reason ?? ''})` : t.decision, notes(t)]);
  if (rows.length > 0) printTable(trimmed(rows));
  if (v.notInLock.length > 0) {
    line(escaped(`Rules for tools the lock does not have (a typo? or a tool not locked yet: ${cmd(`pin ${v.server}`)}):`));
    printTable(v.notInLock.map((t) => [`  ${escaped(t.name)}`, t.kind]));
  }
}

/** The rules of one server as a stable object (`--json`). */
export function jsonOfView(v: RulesView, change?: RulesChange): unknown {
  return {
    server: v.server,
    hasRules: v.hasRules,
    mode: v.mode,
    policy: v.policy,
    askTimeoutSeconds: v.askTimeoutSeconds,
    pin: { state: v.pin.state, hash: v.pin.now ?? null, pinned: v.pin.pinned ?? null },
    tools: v.tools.map((t) => ({
      name: t.name,
      kind: t.kind ?? null,
      decision: t.decision,
      reason: t.reason ?? null,
      claim: t.claim ?? null,
      hintMismatch: t.hintMismatch ?? null,
      descriptionOverridden: t.descriptionOverridden,
      deny: t.deny,
      fixed: t.fixed,
    })),
    notInLock: v.notInLock,
    ...(change ? { change: { changed: change.changed, from: change.from ?? null, to: change.to ?? null } } : {}),
  };
}

/** A proposed classification, every line marked as the server's claim. */
export function printProposal(id: string, proposal: readonly ProposedRule[]): void {
  line(escaped(`Proposed classification for server '${id}' — the SERVER'S CLAIM, read from its own annotations as locked; a hostile server calls its tools harmless, so check each line:`));
  const rows = proposal.map((p) => {
    const then = p.decision === 'withhold' ? `withheld (${p.reason ?? ''})` : p.decision;
    if (p.kept) return [`  ${escaped(p.name)}`, p.kept, then, "kept: the operator's rule"];
    const why = p.from === 'defaults' ? "server's claim: no annotations, so the protocol's defaults (destructive, open world)" : `server's claim (${p.hints.join(', ')})`;
    return [`  ${escaped(p.name)}`, p.kind, then, why];
  });
  if (rows.length > 0) printTable(rows);
  line('(the third column: what strict mode with this classification and the policy now would make of each tool)');
}

export function jsonOfProposal(proposal: readonly ProposedRule[]): unknown {
  return proposal.map((p) => ({ name: p.name, kind: p.kept ?? p.kind, source: p.kept ? 'operator' : "server's claim", from: p.kept ? 'rule' : p.from, hints: p.hints, decision: p.decision, reason: p.reason ?? null }));
}
