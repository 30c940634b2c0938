import type { JsonObject } from '../protocol/json/reader.js';
import { rulesHash, type Rules } from './schema.js';
import { toolVerdict, type ToolVerdict } from './verdict.js';

// The operator's rules on one session: a verdict per tool of the last listing (or listing page) the warden
// judged, which the client's listing and calls then go through. The lock's judgement comes first: a tool the
// lock refuses is never shown or called, whatever its rule says.

export interface SessionRules {
  rules: Rules;
  /** rulesHash(rules), and the hash warden.lock pinned (undefined: none pinned). */
  hash: string;
  lockedHash: string | undefined;
}

export function sessionRules(rules: Rules, lockedHash: string | undefined): SessionRules {
  return { rules, hash: rulesHash(rules), lockedHash };
}

export class RulesGate {
  private readonly verdicts = new Map<string, ToolVerdict>();

  constructor(readonly rules: Rules) {}

  /** Judges a listing's tools; a complete listing replaces every verdict, a page adds to them. */
  judge(tools: readonly { name: string; value: JsonObject }[], complete: boolean): ToolVerdict[] {
    if (complete) this.verdicts.clear();
    const out = tools.map((t) => toolVerdict(this.rules, t.name, t.value));
    for (const v of out) this.verdicts.set(v.name, v);
    return out;
  }

  /** The verdict on a tool of the last listing (undefined: never listed). */
  verdict(name: string): ToolVerdict | undefined {
    return this.verdicts.get(name);
  }
}
