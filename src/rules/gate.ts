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

/** How much a decision takes away: a page may move a tool's verdict only up this order. */
const STRICTNESS: Record<ToolVerdict['decision'], number> = { allow: 0, ask: 1, withhold: 2 };

export class RulesGate {
  /** The verdict per tool name, with the digest of the tool it was made on (a verdict is a function of the
   *  rules and the tool's bytes, so a tool listed again unchanged keeps it). */
  private verdicts = new Map<string, { hTool: string; verdict: ToolVerdict }>();

  constructor(readonly rules: Rules) {}

  /** Judges a listing's tools; a complete listing (the warden's own) replaces every verdict. A page of the
   *  client's listing only takes away (ADR 0037 addendum): a tool it shows as the warden listed it keeps its
   *  verdict; one it shows otherwise (or one the warden never listed) is judged for what the page shows, and that
   *  verdict is kept only where it is stricter than the one the warden's listing gave. */
  judge(tools: readonly { name: string; value: JsonObject; hTool: string }[], complete: boolean): ToolVerdict[] {
    const before = this.verdicts;
    if (complete) this.verdicts = new Map();
    return tools.map((t) => {
      const known = before.get(t.name);
      const verdict = known?.hTool === t.hTool ? known.verdict : toolVerdict(this.rules, t.name, t.value);
      if (complete || (known && STRICTNESS[verdict.decision] > STRICTNESS[known.verdict.decision])) this.verdicts.set(t.name, { hTool: t.hTool, verdict });
      return verdict;
    });
  }

  /** The verdict on a tool of the last listing (undefined: never listed). */
  verdict(name: string): ToolVerdict | undefined {
    return this.verdicts.get(name)?.verdict;
  }
}
