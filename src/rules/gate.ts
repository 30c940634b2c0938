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
  /** The verdict per tool name, with the digest of the tool it was made on (a verdict is a function of the
   *  rules and the tool's bytes, so a tool listed again unchanged keeps it). */
  private verdicts = new Map<string, { hTool: string; verdict: ToolVerdict }>();

  constructor(readonly rules: Rules) {}

  /** Judges a listing's tools; a complete listing replaces every verdict, a page adds to them. */
  judge(tools: readonly { name: string; value: JsonObject; hTool: string }[], complete: boolean): ToolVerdict[] {
    const before = this.verdicts;
    if (complete) this.verdicts = new Map();
    return tools.map((t) => {
      const known = before.get(t.name);
      const verdict = known?.hTool === t.hTool ? known.verdict : toolVerdict(this.rules, t.name, t.value);
      this.verdicts.set(t.name, { hTool: t.hTool, verdict });
      return verdict;
    });
  }

  /** The verdict on a tool of the last listing (undefined: never listed). */
  verdict(name: string): ToolVerdict | undefined {
    return this.verdicts.get(name)?.verdict;
  }
}
