import type { HomePaths } from '../store/paths.js';
import type { Recorder } from '../supervise/recorder.js';
import { readRulesPins, rulesDrifted } from '../supervise/rules-pin.js';

// The daemon's watch on the operator's rules: every change made through `mcp-warden rules` is pinned in
// warden.lock with it, so rules that differ from their pin were changed outside the CLI (a hand edit, or
// someone else's). Each such state is reported once per hash (`rules_changed`, via `outside_cli`, an alert):
// again only when the rules change to yet another hash, or return to the pin and leave it again.

export class RulesWatch {
  /** Per server, the rules hash ('none' for no rules) last reported as changed outside the CLI. */
  private readonly reported = new Map<string, string>();
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly paths: HomePaths,
    private readonly rec: Recorder,
    private readonly say: (m: string) => void,
  ) {}

  /** Compares every locked server's rules with their pin (checks run one after another, in order). */
  check(): Promise<void> {
    this.chain = this.chain.then(() => this.once()).catch((err: Error) => this.say(`could not compare the servers' rules with warden.lock: ${err.message}`));
    return this.chain;
  }

  private async once(): Promise<void> {
    const pins = await readRulesPins(this.paths);
    for (const id of [...this.reported.keys()]) if (!pins.has(id)) this.reported.delete(id);
    for (const [id, pin] of pins) {
      if (!rulesDrifted(pin)) {
        this.reported.delete(id);
        continue;
      }
      const key = pin.now ?? 'none';
      if (this.reported.get(id) === key) continue;
      this.reported.set(id, key);
      this.say(`server '${id}': its rules in servers.json were changed outside the CLI (${pin.state} since the last pin); sessions apply them as written. Review them with: mcp-warden rules ${id}, and pin them with: mcp-warden rules ${id} --pin`);
      this.rec.record({ event: 'rules_changed', server: id, via: 'outside_cli', ...(pin.pinned ? { from: pin.pinned } : {}), ...(pin.now ? { to: pin.now } : {}) });
    }
  }
}
