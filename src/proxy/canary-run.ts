import { DEFAULT_PROBE_NAME, observe, type Observation, type ProbeSpec } from '../canary/probe.js';
import { readJson, type JsonObject } from '../protocol/json/reader.js';
import { admitArguments } from '../rules/call.js';
import type { RulesGate } from '../rules/gate.js';
import { printable } from '../surface/admit.js';
import type { Decisions } from '../surface/posture.js';
import type { ServerChannel } from './channel.js';

/** Runs a probe `n` times over a live channel, one call at a time, timing each round trip. */
export async function runProbe(channel: ServerChannel, spec: ProbeSpec, n: number): Promise<Observation[]> {
  const out: Observation[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    const response = await channel.requestMessage('tools/call', { name: spec.tool, arguments: spec.arguments });
    out.push(observe(response, spec, Number(process.hrtime.bigint() - t) / 1e6));
  }
  return out;
}

/** The tools of a judged listing a canary may call: approved, and proven by the lock whatever the posture
 *  (matched, or the narrowing exception, no widening); a tool monitor lets through with drift is not. */
export function provenTools(decisions: Decisions): Set<string> {
  const proven = [...decisions.tools].filter(([, d]) => d.decision === 'allow' && d.drift.widening.length === 0 && (d.drift.state === 'matched' || (d.drift.state === 'changed' && d.drift.narrowingOnly)));
  return new Set(proven.map(([name]) => name));
}

/** Why a canary was not run (the `notRun` of its canary event). */
export type NotRun = 'tool_not_approved' | 'rules_refused' | 'name_taken';

export interface ProbeBar {
  code: NotRun;
  /** What stopped it, for a report ("its tool … is not proven equal to the lock"). */
  why: string;
  /** What the operator can do next. */
  next: string;
}

/**
 * Why the warden may not call a probe on this session, or undefined when it may (docs/adr/0038). A canary is
 * admitted by proof: its tool was proven equal to the lock on the complete listing just judged (`proven`:
 * provenTools, whatever the posture), and the operator's rules, when the server has any, allow the call as it is (no
 * question to the user, no denied or fixed parameter). The one exception is the default probe, whose tool is a
 * name absent from that complete listing (`listed`): a call of it can run nothing the server declared.
 */
export function probeBar(serverId: string, probe: ProbeSpec, listed: ReadonlySet<string>, proven: ReadonlySet<string>, rules: RulesGate | undefined): ProbeBar | undefined {
  const tool = `"${printable(probe.tool)}"`;
  if (probe.name === DEFAULT_PROBE_NAME) {
    if (!listed.has(probe.tool)) return undefined;
    return { code: 'name_taken', why: `the server now has a tool named ${tool}, the name its default canary calls as one it does not have`, next: `Record new baselines with: mcp-warden canary record ${serverId}` };
  }
  if (!proven.has(probe.tool)) {
    return { code: 'tool_not_approved', why: `its tool ${tool} is not proven equal to the lock on this session (changed, added or gone since the lock)`, next: `Review with: mcp-warden diff ${serverId}; once the tool is pinned, record the canary again with: mcp-warden canary record ${serverId}` };
  }
  if (!rules) return undefined;
  const ruled = `Show the rules with: mcp-warden rules ${serverId}, or change the probe in servers.json`;
  const verdict = rules.verdict(probe.tool);
  if (!verdict) return { code: 'rules_refused', why: `the operator's rules have no verdict on tool ${tool}`, next: ruled };
  if (verdict.decision === 'withhold') return { code: 'rules_refused', why: `the operator's rules withhold tool ${tool} (${verdict.reason})`, next: ruled };
  if (verdict.decision === 'ask') return { code: 'rules_refused', why: `the operator's rules ask the user before each call of tool ${tool}`, next: ruled };
  const params = readJson(JSON.stringify({ name: probe.tool, arguments: probe.arguments })) as JsonObject;
  const args = admitArguments(verdict, params);
  if (!args.ok) return { code: 'rules_refused', why: `the operator's rules refuse its call of tool ${tool} (${args.reason})`, next: ruled };
  if (args.fixed.length > 0) return { code: 'rules_refused', why: `the operator's rules fix parameters of tool ${tool} (${args.fixed.map((f) => `"${printable(f)}"`).join(', ')}) that the probe's recorded call does not carry`, next: ruled };
  return undefined;
}
