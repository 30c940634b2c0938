import { InadmissibleError } from '../surface/admit.js';
import type { Observation, Shape } from './probe.js';

// A baseline pins what K runs of a probe looked like; an evaluation compares later runs with it. Shape and
// normalized text must be identical. Latency fails when the median of the samples exceeds the pinned p95 by the
// configured factor plus slack: a shim that adds 180 ms fails whatever the load, ordinary scheduling noise on a
// loaded 2-core machine does not (docs/canaries.md has the calibration).

export interface Baseline {
  /** The tool the default probe called (drawn at record time); absent for configured probes. */
  tool?: string;
  shape: Shape;
  h_text: string;
  samples: number;
  p50_ms: number;
  p95_ms: number;
  max_ms: number;
}

export interface LatencyPolicy {
  factor: number;
  slackMs: number;
}

export const DEFAULT_LATENCY: LatencyPolicy = { factor: 3, slackMs: 60 };

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
}

const round = (x: number): number => Math.round(x * 1000) / 1000;

/** A baseline from K observations, which must agree on shape and text (a probe that varies is useless). */
export function baselineOf(probe: string, obs: Observation[], tool?: string): Baseline {
  const first = obs[0];
  if (!first) throw new InadmissibleError(`canary "${probe}" produced no observation`);
  for (const o of obs) {
    if (JSON.stringify(o.shape) !== JSON.stringify(first.shape) || o.hText !== first.hText) {
      throw new InadmissibleError(`canary "${probe}" answered differently from one run to the next; declare a normalization for the part that varies`);
    }
  }
  const l = obs.map((o) => o.latencyMs);
  return { ...(tool === undefined ? {} : { tool }), shape: first.shape, h_text: first.hText, samples: obs.length, p50_ms: round(quantile(l, 0.5)), p95_ms: round(quantile(l, 0.95)), max_ms: round(Math.max(...l)) };
}

export interface Verdict {
  pass: boolean;
  /** Why it failed: which of shape, text, latency; or not_run: the warden did not call it (docs/adr/0038). */
  failed: ('shape' | 'text' | 'latency' | 'not_run')[];
  medianMs: number;
  thresholdMs: number;
}

/** A failure on latency alone: worth sampling again (a shim's delay is in every sample, a load spike is not). */
export function latencyOnly(v: Verdict | undefined): boolean {
  return v !== undefined && !v.pass && v.failed.length === 1 && v.failed[0] === 'latency';
}

export function evaluate(base: Baseline, obs: Observation[], policy: LatencyPolicy): Verdict {
  const failed: Verdict['failed'] = [];
  if (obs.some((o) => JSON.stringify(o.shape) !== JSON.stringify(base.shape))) failed.push('shape');
  if (obs.some((o) => o.hText !== base.h_text)) failed.push('text');
  const medianMs = round(quantile(obs.map((o) => o.latencyMs), 0.5));
  const thresholdMs = round(base.p95_ms * policy.factor + policy.slackMs);
  if (medianMs > thresholdMs) failed.push('latency');
  return { pass: failed.length === 0, failed, medianMs, thresholdMs };
}
