import type { JsonObject, JsonValue } from '../protocol/json/reader.js';
import { serialize } from '../protocol/json/write.js';
import { admitArguments } from '../rules/call.js';
import { RulesGate, type SessionRules } from '../rules/gate.js';
import type { ToolVerdict } from '../rules/verdict.js';
import { printable, type LiveTool } from '../surface/admit.js';
import { ClientQuestions } from './ask.js';
import { declaresFormElicitation } from './input-required.js';
import { recordRefusal, shownName, WARDEN_REFUSED, type Refuser } from './client-refusals.js';
import { classify, errorResponse } from '../protocol/message.js';
import { escaped } from '../escape.js';
import type { ClientRequestMessage } from './channel.js';
import type { ListingSource } from './judge.js';

// The operator's rules on an in-band session (docs/formats.md "Operator rules"): which of the tools the lock
// approved the client is shown and may call, as what, with which parameters, and which calls wait for the
// user's yes. Refusals are answered to the client and audited with a reason code, never forwarded.

/** Withheld tools named one by one in a session's report and audit event; past that, a count. */
const NAMED = 100;
/** Past this many characters, a value in the question carries its length. */
const LONG_VALUE = 512;

type Admitted = Extract<ToolVerdict, { decision: 'allow' | 'ask' }>;
type Forward = { msg: ClientRequestMessage; bytes: Buffer };

/** Revision 2026-07-28's error for a request that needs a client capability its envelope does not declare. */
export const MISSING_CLIENT_CAPABILITY = -32021;

/** How a modern call is asked about (input-required.ts): the user's answer its retry carried, whether its
 *  envelope declares form elicitation, and how to answer it with the warden's question. */
export interface ModernAsk {
  answer: 'accept' | 'decline' | 'cancel' | 'timeout' | 'continued' | undefined;
  canAsk: boolean;
  question(message: string, timeoutMs: number): void;
}

/** What to do with a client's tools/call once the lock has approved the tool. */
export type CallDecision =
  | { action: 'forward'; params: JsonObject | undefined }
  | { action: 'refused' }
  | { action: 'ask'; verdict: Admitted; params: JsonObject | undefined };

export class CallRules {
  readonly gate: RulesGate;
  readonly questions: ClientQuestions;
  /** Set from the client's initialize: it declared form elicitation. */
  canAsk = false;
  /** Calls waiting for the user's answer, by the client's id; an accepted one stays until it comes round the
   *  session's queue again (`resume`), so that a cancellation arriving meanwhile still stops it. */
  private readonly held = new Map<string, { tool: string; abort: AbortController; state: 'asking' | 'accepted' | 'cancelled' }>();

  constructor(
    private readonly r: Refuser,
    private readonly session: SessionRules,
  ) {
    this.gate = new RulesGate(session.rules);
    this.questions = new ClientQuestions((bytes) => r.toClient(bytes));
  }

  /** Reads the client's declared capabilities from its initialize params. */
  clientCapabilities(params: JsonValue | undefined): void {
    this.canAsk = declaresFormElicitation(params instanceof Map ? params.get('capabilities') : undefined);
  }

  /** Judges a complete listing; at the session's start, reports and audits what the rules withheld. */
  listed(tools: readonly LiveTool[], source: ListingSource): void {
    const verdicts = this.gate.judge(tools, true);
    if (source === 'handshake') this.started(verdicts);
  }

  /** The tools of one page of the client's listing (already approved by the lock) as the client is shown them;
   *  `changed` when that is not what the server sent. */
  page(tools: readonly LiveTool[]): { values: JsonValue[]; changed: boolean } {
    const verdicts = this.gate.judge(tools, false);
    const values: JsonValue[] = [];
    let changed = false;
    verdicts.forEach((v, i) => {
      if (v.decision === 'withhold') changed = true;
      else {
        values.push(v.shown ?? (tools[i] as LiveTool).value);
        if (v.shown) changed = true;
      }
    });
    return { values, changed };
  }

  /**
   * A tools/call of a tool the lock approved, under the rules: the message to forward (fixed values added), or
   * undefined when it was refused (answered here) or is held for the user's answer (`requeue` puts it back in the
   * session's queue once accepted; `asked` marks it so when it comes round again).
   */
  admit(msg: ClientRequestMessage, bytes: Buffer, requeue: () => void, asked: boolean): Forward | undefined {
    const params = msg.value.get('params');
    const name = params instanceof Map ? params.get('name') : undefined;
    if (!(params instanceof Map) || typeof name !== 'string') return { msg, bytes };
    const decision = this.decide(msg.id, name, params, asked);
    if (decision.action === 'refused') return undefined;
    if (decision.action === 'forward') return decision.params ? this.rewritten(msg, decision.params) : { msg, bytes };
    // Accepted, the call goes back through the session's queue as it arrived: it waits for a re-list under way
    // (or due), and the lock and the rules judge it again on the listing of that moment.
    void this.ask(msg.id, name, decision.verdict, decision.params ?? params).then((yes) => yes && requeue());
    return undefined;
  }

  private rewritten(msg: ClientRequestMessage, params: JsonObject): Forward {
    return withParams(msg, params);
  }

  /**
   * A tools/call of a tool the lock approved on a connection of revision 2026-07-28, under the rules: a call
   * the rules hold for the user is answered with the warden's own `input_required` (`m.question`), and its
   * retry, with the user's answer read from it (`m.answer`), judged here again; a retry of a question the
   * server asked after the user's yes (`continued`) goes on without a second one. `asked` on the result: the
   * call goes on by the user's yes.
   */
  admitModern(msg: ClientRequestMessage, bytes: Buffer, m: ModernAsk): (Forward & { asked: boolean }) | undefined {
    const params = msg.value.get('params');
    const name = params instanceof Map ? params.get('name') : undefined;
    if (!(params instanceof Map) || typeof name !== 'string') return { msg, bytes, asked: false };
    const kind = this.gate.verdict(name)?.kind ?? 'unclassified';
    const args = params.get('arguments');
    if (m.answer !== undefined && m.answer !== 'continued') {
      this.r.cfg.audit({ event: 'call_asked', server: this.r.cfg.serverId, tool: name.slice(0, 128), kind, arguments: (args instanceof Map ? [...args.keys()] : []).map((n) => n.slice(0, 128)), answer: m.answer });
      if (m.answer !== 'accept') {
        this.refuse(msg.id, name, 'ask_declined', m.answer === 'timeout' ? `no answer within ${this.session.rules.askTimeoutSeconds} s` : `the user answered ${m.answer}`);
        return undefined;
      }
    }
    const asked = m.answer !== undefined;
    const decision = this.decide(msg.id, name, params, asked);
    if (decision.action === 'refused') return undefined;
    if (decision.action === 'forward') return { ...(decision.params ? this.rewritten(msg, decision.params) : { msg, bytes }), asked };
    if (!m.canAsk) {
      const detail = `the policy for ${decision.verdict.kind ?? 'unclassified'} tools is ask and this request's client capabilities do not declare form elicitation, so the warden cannot ask the user`;
      this.refuse(msg.id, name, 'ask_unavailable', detail, { code: MISSING_CLIENT_CAPABILITY, data: { requiredCapabilities: { elicitation: { form: {} } } } });
      return undefined;
    }
    // The question shows the arguments the server would receive (fixed values included).
    m.question(question(this.r.cfg.serverId, name, kind, (decision.params ?? params).get('arguments')), this.session.rules.askTimeoutSeconds * 1000);
    return undefined;
  }

  /** Decides a call of `tool` (approved by the lock on this session). */
  decide(id: string, tool: string, params: JsonObject, askedAlready = false): CallDecision {
    const verdict = this.gate.verdict(tool);
    if (!verdict) return this.refuse(id, tool, 'unclassified', 'it was not in a listing judged on this session');
    if (verdict.decision === 'withhold') return this.refuse(id, tool, verdict.reason, verdict.detail);
    const args = admitArguments(verdict, params);
    if (!args.ok) return this.refuse(id, tool, args.reason, args.detail);
    if (verdict.decision === 'ask' && !askedAlready) return { action: 'ask', verdict, params: args.params };
    if (args.fixed.length > 0) this.r.cfg.audit({ event: 'call_fixed', server: this.r.cfg.serverId, tool: tool.slice(0, 128), parameters: args.fixed });
    return { action: 'forward', params: args.params };
  }

  /**
   * Asks the user about a held call; true when they accepted (the caller forwards the call after judging it
   * again). Refuses the call to the client otherwise, except when the client itself cancelled it.
   */
  async ask(id: string, tool: string, verdict: Admitted, params: JsonObject): Promise<boolean> {
    // The question shows the arguments the server would receive (fixed values included).
    const { serverId } = this.r.cfg;
    const kind = verdict.kind ?? 'unclassified';
    if (!this.canAsk) {
      this.refuse(id, tool, 'ask_unavailable', `the policy for ${kind} tools is ask and the client did not declare the elicitation capability, so the warden cannot ask the user`);
      return false;
    }
    // One question at a time: a person asked many in a row answers none of them with care.
    if (this.held.size > 0) {
      this.refuse(id, tool, 'ask_unavailable', 'another call is waiting for the user\'s answer; call again once it is answered');
      return false;
    }
    const args = params.get('arguments');
    const names = args instanceof Map ? [...args.keys()] : [];
    const abort = new AbortController();
    const entry = { tool, abort, state: 'asking' as 'asking' | 'accepted' | 'cancelled' };
    this.held.set(id, entry);
    const answer = await this.questions.ask(question(serverId, tool, kind, args), this.session.rules.askTimeoutSeconds * 1000, abort.signal);
    this.r.cfg.audit({ event: 'call_asked', server: serverId, tool: tool.slice(0, 128), kind, arguments: names.map((n) => n.slice(0, 128)), answer });
    // The client's cancellation may have been read after the answer settled the question and before this line
    // runs (both in one chunk): the entry says so, and the call then goes no further.
    const cancelled = this.held.get(id) !== entry || entry.state === 'cancelled';
    if (answer === 'accept' && !cancelled) {
      entry.state = 'accepted';
      return true;
    }
    if (this.held.get(id) === entry) this.held.delete(id);
    if (answer !== 'withdrawn' && !cancelled) {
      const why = answer === 'timeout' ? `no answer within ${this.session.rules.askTimeoutSeconds} s` : answer === 'error' ? 'the client could not ask the user (it answered the question with an error)' : `the user answered ${answer}`;
      this.refuse(id, tool, answer === 'error' ? 'ask_unavailable' : 'ask_declined', why);
    }
    return false;
  }

  /** The client cancelled a call that waits for the user, or that the user accepted and that was not forwarded
   *  yet: the question is withdrawn, or the call will not be forwarded (no answer is owed either way). */
  cancelled(clientId: string): boolean {
    const held = this.held.get(clientId);
    if (!held) return false;
    held.state = 'cancelled';
    held.abort.abort();
    return true;
  }

  /** An accepted call back from the session's queue: true when it may go on to be judged again and forwarded;
   *  false when the client cancelled it meanwhile (reported, not forwarded, no answer owed). */
  resume(clientId: string): boolean {
    const held = this.held.get(clientId);
    this.held.delete(clientId);
    if (held?.state === 'accepted') return true;
    this.r.cfg.report(`the client cancelled its call to tool "${shownName(held?.tool ?? '')}" of server '${this.r.cfg.serverId}' before it was forwarded; not forwarded`);
    return false;
  }

  /** The session is closing: every held call is answered with the refusal now (while the client can still be
   *  written to), and its question withdrawn. */
  close(): void {
    for (const [id, { tool, abort, state }] of [...this.held]) {
      this.held.delete(id);
      if (state !== 'cancelled') this.refuse(id, tool, 'ask_declined', state === 'asking' ? 'the session was closed before the user answered' : 'the session was closed before the accepted call was forwarded');
      abort.abort();
    }
    this.questions.withdrawAll();
  }

  private refuse(id: string, tool: string, reason: string, detail: string, as: { code: number; data: Record<string, unknown> } = { code: WARDEN_REFUSED, data: {} }): { action: 'refused' } {
    const { serverId } = this.r.cfg;
    this.r.stats.refusedCalls++;
    const shown = shownName(tool);
    if (recordRefusal(this.r, 'tools/call', 'tool', tool)) {
      this.r.cfg.audit({ event: 'call_refused', server: serverId, tool: tool.slice(0, 128), reason, ...(reason === 'schema_refused' ? {} : { detail }) });
      this.r.cfg.report(`refused a call to tool "${shown}" of server '${serverId}' (${reason}): ${printableDetail(detail)}. Show the rules with: mcp-warden rules ${serverId}`);
    }
    // A schema's refusal names places in the server's schema (its member names): the client is told the reason in
    // the warden's words only, the detail goes to stderr and the audit (proxy/refusal-text.ts).
    const told = reason === 'schema_refused' ? "its locked schema cannot be checked under the operator's rules (the warden's stderr says where)" : printableDetail(detail);
    this.r.toClient(errorResponse(id, as.code, `mcp-warden refused the call to tool "${shown}" of server '${serverId}' (${reason}): ${told}. The operator's rules: mcp-warden rules ${serverId}`, { ...as.data, reason, server: serverId }));
    return { action: 'refused' };
  }

  private started(verdicts: ToolVerdict[]): void {
    const { serverId } = this.r.cfg;
    const { rules, hash, lockedHash } = this.session;
    const withheld = verdicts.filter((v): v is Extract<ToolVerdict, { decision: 'withhold' }> => v.decision === 'withhold');
    const overrides = verdicts.flatMap((v) => (v.decision !== 'withhold' && v.override.length > 0 ? [{ tool: v.name.slice(0, 128), kind: v.kind ?? '', hints: v.override }] : []));
    this.r.cfg.audit({
      event: 'rules_applied',
      server: serverId,
      mode: rules.mode,
      rulesHash: hash,
      ...(lockedHash ? { lockedRulesHash: lockedHash } : {}),
      rulesPinned: lockedHash === hash,
      withheld: withheld.slice(0, NAMED).map((v) => ({ tool: v.name.slice(0, 128), reason: v.reason })),
      withheldCount: withheld.length,
      overrides,
    });
    if (lockedHash !== hash) this.r.cfg.report(`server '${serverId}': its rules in servers.json ${lockedHash ? 'differ from the ones pinned in warden.lock' : 'were never pinned in warden.lock'}; they apply as written. Review with: mcp-warden rules ${serverId}, and pin them with: mcp-warden rules ${serverId} --pin`);
    if (withheld.length > 0) {
      const byReason = new Map<string, string[]>();
      for (const v of withheld) byReason.set(v.reason, [...(byReason.get(v.reason) ?? []), printable(v.name)]);
      const parts = [...byReason].map(([reason, names]) => `${reason}: ${names.slice(0, 20).join(', ')}${names.length > 20 ? ` and ${names.length - 20} more` : ''}`);
      this.r.cfg.report(`server '${serverId}' (${rules.mode} mode): ${withheld.length} tool${withheld.length === 1 ? '' : 's'} withheld by the operator's rules (${parts.join('; ')}). Show them with: mcp-warden rules ${serverId}`);
    }
    for (const o of overrides) this.r.cfg.report(`server '${serverId}': tool "${printable(o.tool)}" is classified ${o.kind} although the server's ${o.hints.join(' and ')} claim more; allowed by the rule's allowHintMismatch.`);
  }
}

/** The client's request with other params, as a message of its own (re-serialized and read back). */
export function withParams(msg: ClientRequestMessage, params: JsonObject): Forward {
  const value = new Map(msg.value);
  value.set('params', params);
  const bytes = Buffer.from(serialize(value) + '\n');
  const again = classify(bytes, { maxBytes: Number.MAX_SAFE_INTEGER, maxDepth: 128 });
  if (again.kind !== 'request') throw new Error(`the rewritten call did not read back as a request (${again.kind})`);
  return { msg: again, bytes };
}

/** A rules explanation for a message: escaped, cut at 400 characters (it may quote a pointer into the server's
 *  schema). */
function printableDetail(detail: string): string {
  return escaped(detail.length > 400 ? `${detail.slice(0, 400)}…` : detail);
}

/** The question put to the user: server, tool, kind, and every argument with its value as JSON. */
function question(serverId: string, tool: string, kind: string, args: JsonValue | undefined): string {
  const lines = [`mcp-warden: server '${serverId}' is asked to run tool "${escaped(shownName(tool))}" (classified ${kind} by the operator). Allow this call?`];
  if (args instanceof Map && args.size > 0) {
    lines.push('Arguments:');
    for (const [name, value] of args) lines.push(`  ${escaped(JSON.stringify(name))}: ${shownValue(value)}`);
  } else if (args instanceof Map || args === undefined) lines.push('No arguments.');
  else lines.push(`Arguments (not an object): ${shownValue(args)}`);
  return lines.join('\n');
}

/** A value as JSON for a person: escaped, and its length said when it is long (a client may cut the text). */
function shownValue(value: JsonValue): string {
  const text = escaped(serialize(value));
  return text.length > LONG_VALUE ? `${text} (${text.length.toLocaleString('en-US')} characters)` : text;
}
