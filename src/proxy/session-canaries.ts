import { evaluate, latencyOnly } from '../canary/baseline.js';
import { collides, collisionMessage } from '../canary/probe.js';
import { runProbe } from './canary-run.js';
import type { ServerChannel } from './channel.js';
import { SurfaceRefusal, type SessionConfig } from './session-config.js';

/** Session-start canaries, run before the client is released: their answers never reach the client, and a
 *  failure refuses the session in enforce (reported, and let through, in monitor). */
export async function runSessionCanaries(server: ServerChannel, cfg: SessionConfig, listed: ReadonlySet<string>): Promise<void> {
  const c = cfg.canaries;
  if (!c) return;
  const failures: string[] = [];
  for (const probe of c.probes) {
    const base = c.baselines[probe.name];
    if (!base) continue;
    if (collides(probe, listed)) {
      failures.push(`canary "${probe.name}" was not run`);
      cfg.report(collisionMessage(cfg.serverId, probe));
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
      cfg.report(`server '${cfg.serverId}': ${why}${cfg.posture === 'monitor' ? '; allowed (monitor)' : ''}. Check with: mcp-warden canary check ${cfg.serverId}`);
    }
  }
  if (failures.length > 0 && cfg.posture === 'enforce') throw new SurfaceRefusal(failures.join('; '));
}
