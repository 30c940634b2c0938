import { evaluate, latencyOnly } from '../canary/baseline.js';
import type { RulesGate } from '../rules/gate.js';
import { probeBar, runProbe } from './canary-run.js';
import type { ServerChannel } from './channel.js';
import { SurfaceRefusal, type SessionConfig } from './session-config.js';

/** Session-start canaries, run before the client is released: their answers never reach the client, and a
 *  failure refuses the session in enforce (reported, and let through, in monitor). A probe whose call is not
 *  proven admissible (`listed`, `proven` and `rules` of the handshake's listing: canary-run.ts) is not run, and
 *  that counts as a failure (docs/adr/0038). */
export async function runSessionCanaries(server: ServerChannel, cfg: SessionConfig, listed: ReadonlySet<string>, proven: ReadonlySet<string>, rules: RulesGate | undefined): Promise<void> {
  const c = cfg.canaries;
  if (!c) return;
  const failures: string[] = [];
  const allowed = cfg.posture === 'monitor' ? '; allowed (monitor)' : '';
  for (const probe of c.probes) {
    const base = c.baselines[probe.name];
    if (!base) continue;
    const bar = probeBar(cfg.serverId, probe, listed, proven, rules);
    if (bar) {
      const why = `canary "${probe.name}" was not run: ${bar.why}`;
      failures.push(why);
      cfg.audit({ event: 'canary', server: cfg.serverId, probe: probe.name, result: 'fail', failed: ['not_run'], notRun: bar.code, medianMs: 0, thresholdMs: 0, source: 'session' });
      cfg.report(`server '${cfg.serverId}': ${why}${allowed}. ${bar.next}`);
      continue;
    }
    let verdict = evaluate(base, await runProbe(server, probe, c.samples), c.policy);
    // A latency-only failure is sampled again (twice): a shim's added delay is in every sample, a load spike
    // is not. Shape and text failures are final at once.
    for (let retry = 0; retry < 2 && latencyOnly(verdict); retry++) {
      verdict = evaluate(base, await runProbe(server, probe, c.samples), c.policy);
    }
    cfg.audit({ event: 'canary', server: cfg.serverId, probe: probe.name, result: verdict.pass ? 'pass' : 'fail', failed: verdict.failed, medianMs: verdict.medianMs, thresholdMs: verdict.thresholdMs, source: 'session' });
    if (!verdict.pass) {
      const why = `canary "${probe.name}" failed (${verdict.failed.join(', ')}; median ${verdict.medianMs} ms, limit ${verdict.thresholdMs} ms)`;
      failures.push(why);
      cfg.report(`server '${cfg.serverId}': ${why}${allowed}. Check with: mcp-warden canary check ${cfg.serverId}`);
    }
  }
  if (failures.length > 0 && cfg.posture === 'enforce') throw new SurfaceRefusal(failures.join('; '), { code: 'canary_failed', failures: failures.join('; ') });
}
