import { observe, type Observation, type ProbeSpec } from '../canary/probe.js';
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
