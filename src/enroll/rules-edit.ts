import * as v from 'valibot';
import { objectRecord } from '../schema/own-record.js';
import { appendAudit } from '../audit/log.js';
import { WardenError } from '../error.js';
import { rulesHash, rulesSchema, type Rules } from '../rules/schema.js';
import { explainIssues } from '../schema/issues.js';
import { loadLocks, saveRulesHash } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, serverById, updateServers } from '../store/servers.js';
import { rulesPin } from '../supervise/rules-pin.js';

// Changing a server's rules through the CLI (`mcp-warden rules <id> --kind … --pin`): the edits are applied to
// the rules as written in servers.json, the result is validated by the same schema that reads the file (so a
// refusal names servers.json and the JSON pointer, and nothing is written), saved under servers.json's lock,
// its hash pinned in warden.lock, and the change audited (`rules_changed`, via `cli`).

/** One change, in the order the operator gave them. Values are passed on as given: the schema judges them. */
export type RulesEdit =
  | { op: 'mode'; mode: string }
  | { op: 'kind'; tool: string; kind: string }
  | { op: 'unclassify'; tool: string }
  | { op: 'policy'; kind: string; decision: string }
  | { op: 'hint-mismatch'; tool: string; allow: boolean }
  | { op: 'deny'; tool: string; param: string }
  | { op: 'undeny'; tool: string; param: string }
  | { op: 'fix'; tool: string; param: string; value: unknown }
  | { op: 'unfix'; tool: string; param: string }
  | { op: 'describe'; tool: string; text: string }
  | { op: 'undescribe'; tool: string }
  | { op: 'ask-timeout'; seconds: unknown }
  | { op: 'clear' };

type Plain = Record<string, unknown>;
type PlainRule = { kind?: unknown; allowHintMismatch?: boolean; description?: string; deny?: string[]; fixed?: Plain };

/** Edits that name a tool which must be in the lock (removals may name any tool the rules have: a typo). */
const NEEDS_LOCKED_TOOL = new Set(['kind', 'hint-mismatch', 'deny', 'fix', 'describe']);

const own = <T>(o: Record<string, T>, k: string): T | undefined => (Object.hasOwn(o, k) ? o[k] : undefined);

/** A plain copy of the rules as servers.json holds them (defaults filled in), for editing. */
function plainOf(rules: Rules | undefined): Plain | undefined {
  return rules === undefined ? undefined : (JSON.parse(JSON.stringify(rules)) as Plain);
}

function ruleFor(rules: Plain, tool: string, id: string, op: string): PlainRule {
  const tools = (rules.tools ??= {}) as Record<string, PlainRule>;
  const rule = own(tools, tool);
  if (rule) return rule;
  throw new WardenError('RULES_INVALID', `tool "${tool}" of server '${id}' has no rule, so --${op} has nothing to change. Classify it first, in the same command: --kind ${tool}=KIND (one of read, local-change, remote-change, destructive). Nothing was changed.`);
}

/** Applies the edits to a copy of `before`; undefined when the rules are cleared. */
export function applyEdits(before: Rules | undefined, edits: readonly RulesEdit[], id: string): Plain | undefined {
  let rules = plainOf(before);
  for (const e of edits) {
    if (e.op === 'clear') {
      rules = undefined;
      continue;
    }
    if (e.op === 'unclassify' && rules === undefined) continue; // nothing to remove: no rules object is made for it
    rules ??= {};
    const tools = (rules.tools ??= {}) as Record<string, PlainRule>;
    switch (e.op) {
      case 'mode':
        rules.mode = e.mode;
        break;
      case 'ask-timeout':
        rules.askTimeoutSeconds = e.seconds;
        break;
      case 'policy': {
        const policy = (rules.policy ??= {}) as Plain;
        if (e.decision === 'default') delete policy[e.kind];
        else policy[e.kind] = e.decision;
        break;
      }
      case 'kind':
        Object.defineProperty(tools, e.tool, { value: { ...(own(tools, e.tool) ?? {}), kind: e.kind }, enumerable: true, writable: true, configurable: true });
        break;
      case 'unclassify':
        delete tools[e.tool];
        break;
      case 'hint-mismatch': {
        const rule = ruleFor(rules, e.tool, id, e.allow ? 'allow-hint-mismatch' : 'no-allow-hint-mismatch');
        if (e.allow) rule.allowHintMismatch = true;
        else delete rule.allowHintMismatch;
        break;
      }
      case 'deny': {
        const rule = ruleFor(rules, e.tool, id, 'deny');
        if (!(rule.deny ?? []).includes(e.param)) rule.deny = [...(rule.deny ?? []), e.param];
        break;
      }
      case 'undeny': {
        const rule = ruleFor(rules, e.tool, id, 'undeny');
        rule.deny = (rule.deny ?? []).filter((p) => p !== e.param);
        if (rule.deny.length === 0) delete rule.deny;
        break;
      }
      case 'fix': {
        const rule = ruleFor(rules, e.tool, id, 'fix');
        rule.fixed = { ...(rule.fixed ?? {}) };
        Object.defineProperty(rule.fixed, e.param, { value: e.value, enumerable: true, writable: true, configurable: true });
        break;
      }
      case 'unfix': {
        const rule = ruleFor(rules, e.tool, id, 'unfix');
        if (rule.fixed) delete rule.fixed[e.param];
        if (rule.fixed && Object.keys(rule.fixed).length === 0) delete rule.fixed;
        break;
      }
      case 'describe':
        ruleFor(rules, e.tool, id, 'describe').description = e.text;
        break;
      case 'undescribe':
        delete ruleFor(rules, e.tool, id, 'undescribe').description;
        break;
    }
  }
  return rules;
}

/** The rules as the schema reads them, or a refusal naming servers.json and the JSON pointer of the bad value. */
export function validated(candidate: Plain, id: string, file: string): Rules {
  // Parsed inside the shape of servers.json so the pointer reads /servers/<id>/rules/...
  // Own keys: a server may be named "constructor" (valibot's record drops that key).
  const schema = v.object({ servers: objectRecord(v.string(), v.object({ rules: rulesSchema })) });
  const r = v.safeParse(schema, { servers: { [id]: { rules: candidate } } });
  if (r.success) return (r.output.servers[id] as { rules: Rules }).rules;
  const { problem } = explainIssues('servers.json', schema, r.issues);
  throw new WardenError('RULES_INVALID', `${problem}. File: ${file}. Nothing was changed; correct the option and run the command again.`);
}

/** Refuses edits that name a tool the server's lock does not have (`locked`: its tool names). */
export function checkToolNames(edits: readonly RulesEdit[], locked: readonly string[], id: string): void {
  for (const e of edits) {
    if (!('tool' in e) || !NEEDS_LOCKED_TOOL.has(e.op) || locked.includes(e.tool)) continue;
    const near = locked.find((t) => t.toLowerCase() === e.tool.toLowerCase()) ?? locked.find((t) => t.includes(e.tool) || e.tool.includes(t));
    throw new WardenError('TOOL_UNKNOWN', `server '${id}' has no tool "${e.tool}" in tools.lock${near ? ` (did you mean "${near}"?)` : ''}; its tools: ${locked.join(', ') || 'none'}. Nothing was changed. (A tool the server lists only later must be locked first: mcp-warden diff ${id}, then mcp-warden pin ${id})`);
  }
}

export interface RulesChange {
  /** The pinned hash before, and the rules' hash now (absent: no rules). */
  from?: string;
  to?: string;
  /** False when the edits left the rules as they were and already pinned (nothing written, nothing audited). */
  changed: boolean;
}

/**
 * Applies `edits` to server `id`'s rules, writes them, pins their hash and audits the change. With `pin`, rules
 * changed by hand since the last pin are accepted as they are first; without it they refuse any edit (an edit
 * through the CLI pins the result, and so would pin an unreviewed hand edit with it).
 */
export async function changeRules(paths: HomePaths, id: string, edits: readonly RulesEdit[], pin: boolean): Promise<RulesChange> {
  serverById(loadServers(paths), id, paths);
  const locked = loadLocks(paths);
  const entry = locked.tools.get(id);
  if (!entry || !locked.warden.get(id)) throw new WardenError('LOCK_MISSING', `server '${id}' has no entry in tools.lock and warden.lock, so its rules cannot be pinned. Capture one first: mcp-warden lock ${id}`);
  checkToolNames(edits, entry.tools.map((t) => t.name), id);
  let change: RulesChange = { changed: false };
  await updateServers(paths, async (file) => {
    const server = serverById(file, id, paths);
    const pinState = rulesPin(server, loadLocks(paths).warden.get(id));
    if (!pin && edits.length > 0 && pinState.state !== 'none' && pinState.state !== 'pinned') {
      throw new WardenError('RULES_NOT_PINNED', `the rules of server '${id}' in ${paths.servers} are not the ones pinned in warden.lock (${pinState.state} since the last pin, probably by hand). Review them with: mcp-warden rules ${id}; then pin them (mcp-warden rules ${id} --pin) and edit again, or add --pin to this command. Nothing was changed.`);
    }
    const candidate = applyEdits(server.rules, edits, id);
    const after = candidate === undefined ? undefined : validated(candidate, id, paths.servers);
    const to = after ? rulesHash(after) : undefined;
    change = { ...(pinState.pinned ? { from: pinState.pinned } : {}), ...(to ? { to } : {}), changed: to !== pinState.pinned };
    if (after) server.rules = after;
    else delete server.rules;
    // Pinned before servers.json is written, both under its lock (see supervise/rules-pin.ts): a failure in
    // between leaves rules that differ from the pin, which every session and the daemon report.
    if (change.changed) await saveRulesHash(paths, id, to);
  });
  if (change.changed) await appendAudit(paths.audit, { event: 'rules_changed', server: id, via: 'cli', ...(change.from ? { from: change.from } : {}), ...(change.to ? { to: change.to } : {}) });
  return change;
}
