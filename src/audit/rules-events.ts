// Audit events of the operator's rules (docs/formats.md, "Operator rules"). Names only: tool and parameter
// names, kinds, annotation *names*, reason codes; never argument values, descriptions or annotation values.

/** At every session start of a server with rules: what they withheld and which hint mismatches they accepted. */
export interface RulesAppliedEvent {
  event: 'rules_applied';
  server: string;
  mode: 'strict' | 'open';
  rulesHash: string;
  /** The hash warden.lock pinned; absent when none is. */
  lockedRulesHash?: string;
  /** False when the rules differ from the pinned ones (changed outside the CLI, or never pinned). */
  rulesPinned: boolean;
  /** Tools not shown and not callable, with the reason code (at most 100 listed; `withheldCount` has them all). */
  withheld: { tool: string; reason: string }[];
  withheldCount: number;
  /** Classifications the server's hints dispute, accepted by an explicit allowHintMismatch. */
  overrides: { tool: string; kind: string; hints: string[] }[];
}

/** A call forwarded with the operator's fixed values added (the parameter names, never the values). */
export interface CallFixedEvent {
  event: 'call_fixed';
  server: string;
  tool: string;
  parameters: string[];
}

/** The user's answer to the warden's question about a call of an `ask` tool. */
export interface CallAskedEvent {
  event: 'call_asked';
  server: string;
  tool: string;
  kind: string;
  /** The arguments' names (the question showed their values; the log does not keep them). */
  arguments: string[];
  answer: 'accept' | 'decline' | 'cancel' | 'timeout' | 'error' | 'withdrawn';
}

/** The rules of a server changed: through the CLI (`rules`), or found changed outside it (the daemon). */
export interface RulesChangedEvent {
  event: 'rules_changed';
  server: string;
  via: 'cli' | 'outside_cli';
  /** The pinned hash before, and the rules' hash now (absent: no rules). */
  from?: string;
  to?: string;
}

export type RulesEvent = RulesAppliedEvent | CallFixedEvent | CallAskedEvent | RulesChangedEvent;
