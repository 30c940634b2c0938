import { baselineOf, evaluate, latencyOnly, type Baseline, type Verdict } from '../canary/baseline.js';
import { DEFAULT_PROBE_NAME, defaultToolOf, drawUnknownTool, probesOf, type Observation, type ProbeSpec } from '../canary/probe.js';
import type { Recorder } from './recorder.js';
import { WardenError } from '../error.js';
import { probeBar, provenTools, runProbe, type ProbeBar } from '../proxy/canary-run.js';
import { RulesGate } from '../rules/gate.js';
import type { Handshake, LiveTool } from '../surface/admit.js';
import { diffSurface } from '../surface/diff.js';
import { lockedExtra } from '../surface/warden-lock.js';
import { decide } from '../surface/posture.js';
import { DEFAULT_CHANNEL_LIMITS, ProtocolError } from '../proxy/channel.js';
import { DEFAULT_OFFERED } from '../proxy/fetch.js';
import { PreCommitError, openByFlow, selectedFlow } from '../proxy/fetch-stateless.js';
import { listAllTools } from '../proxy/listing.js';
import { DEFAULT_CAPS, InadmissibleError } from '../surface/admit.js';
import { loadClientSeen } from '../store/client-seen.js';
import { loadLocks, saveCanaryBaselines } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, serverById } from '../store/servers.js';
import { attestAndLaunch, stopLaunched } from './attested-launch.js';
import type { HeldSession } from './surface-fetch.js';
import { escaped } from '../escape.js';

// Out-of-band canary runs, for `canary record`, `canary check`, enrollment and the daemon's schedule: recording
// pins each probe's answer and latency envelope on a fresh launch (at enrollment, on the lock's last launch, held
// open after the listing the lock was built from: docs/adr/0061); checking runs them again and compares.
// Canary answers never reach any client.

const say = (m: string): void => void process.stderr.write(`mcp-warden: ${escaped(m)}\n`);
export const RECORD_SAMPLES = 10;
export const CHECK_SAMPLES = 5;

/** A fresh attested launch of the server, opened as a client offering no capabilities and its tools listed. */
async function openFresh(paths: HomePaths, id: string): Promise<HeldSession> {
  // Over the flow the lock records (docs/adr/0046); an entry without one that offered revision 2026-07-28 speaks
  // the stateless flow (a canary run has no surface to settle a flow by).
  const protocol = loadLocks(paths).tools.get(id)?.protocol ?? { offered: DEFAULT_OFFERED };
  const selected = selectedFlow(protocol);
  const flow = selected === 'probe' ? 'stateless' : selected;
  const launched = await attestAndLaunch(paths, id, say);
  launched.child.stderr.resume();
  let noise = 0;
  const end: HeldSession['end'] = (cause, grace) => stopLaunched(paths, id, launched, cause, { nonJsonLines: noise, oversizeLines: 0, refusedClientLines: 0 }, { grace, say });
  try {
    const limits = { ...DEFAULT_CHANNEL_LIMITS };
    const { channel, handshake } = await openByFlow(flow, { serverIn: launched.child.stdin, serverOut: launched.child.stdout, verifyWriter: launched.verifyWriter }, { offered: protocol.offered, clientInfo: loadClientSeen(paths, id) }, {}, DEFAULT_CAPS, limits, () => noise++);
    const tools = await listAllTools(channel, DEFAULT_CAPS);
    return { launched, channel, limits, handshake, tools, noise: () => noise, end };
  } catch (thrown) {
    await end('protocol_error', false);
    throw canaryError(id, thrown);
  }
}

function canaryError(id: string, thrown: unknown): unknown {
  const err = thrown instanceof PreCommitError ? thrown.inner : thrown;
  if (err instanceof ProtocolError) return new WardenError('PROTOCOL_FAILURE', `could not run the canaries of server '${id}': ${err.message}.`);
  if (err instanceof InadmissibleError) return new WardenError('SURFACE_INADMISSIBLE', `server '${id}': ${err.reason}.`);
  return err;
}

/**
 * Runs every probe of a server on one attested launch, as a client would: initialize, list the tools, then one
 * warm-up call of each probe and `n` samples. The launch is a fresh one, or `held` (enrollment: the lock's last
 * launch, its listing judged against the lock just written), and is ended here either way. `defaultTool` is the
 * default probe's tool, or 'draw' to draw a new one (recording).
 */
async function sample(paths: HomePaths, id: string, n: number, defaultTool: string | 'draw', held?: HeldSession): Promise<{ server: ReturnType<typeof serverById>; results: { probe: ProbeSpec; obs?: Observation[]; bar?: ProbeBar }[] }> {
  const server = serverById(loadServers(paths), id, paths);
  const session = held ?? (await openFresh(paths, id));
  // A canary's request waits as long as on a fresh launch's channel.
  session.limits.requestTimeoutMs = DEFAULT_CHANNEL_LIMITS.requestTimeoutMs;
  const { channel, handshake, tools } = session;
  try {
    const listed = new Set(tools.map((t) => t.name));
    const probes = probesOf(server.canaries, defaultTool === 'draw' ? drawUnknownTool(listed) : defaultTool);
    // As at session start: a probe is called only when a session of this listing would admit its call.
    const rules = server.rules && new RulesGate(server.rules);
    rules?.judge(tools, true);
    const proven = provenByLock(paths, id, handshake, tools);
    const results: { probe: ProbeSpec; obs?: Observation[]; bar?: ProbeBar }[] = probes.map((probe) => {
      const bar = probeBar(id, probe, listed, proven, rules);
      return bar ? { probe, bar } : { probe };
    });
    const barred = results.find((r) => r.bar);
    if (barred?.bar && defaultTool === 'draw') throw new WardenError('CANARY_STALE', `server '${id}': canary "${barred.probe.name}" was not run: ${barred.bar.why}; no baseline was recorded. ${barred.bar.next.replace(/; once the tool is pinned.*$/, '')}`);
    for (const r of results) {
      if (r.bar) continue;
      await runProbe(channel, r.probe, 1);
      r.obs = await runProbe(channel, r.probe, n);
    }
    await session.end('client_eof', true);
    return { server, results };
  } catch (thrown) {
    await session.end('protocol_error', false);
    throw canaryError(id, thrown);
  }
}

/** Records baselines (used by `canary record`, and by `add` on the lock's held launch). */
export async function recordCanaries(paths: HomePaths, id: string, held?: HeldSession): Promise<Record<string, Baseline>> {
  const { results } = await sample(paths, id, RECORD_SAMPLES, 'draw', held);
  const baselines: Record<string, Baseline> = {};
  for (const { probe, obs } of results) {
    try {
      baselines[probe.name] = baselineOf(probe.name, obs ?? [], probe.name === DEFAULT_PROBE_NAME ? probe.tool : undefined);
    } catch (err) {
      if (err instanceof InadmissibleError) throw new WardenError('SURFACE_INADMISSIBLE', `server '${id}': ${err.reason}.`);
      throw err;
    }
  }
  await saveCanaryBaselines(paths, id, baselines);
  return baselines;
}

/** Runs every canary of a server out of band and records each verdict (used by `canary check` and the daemon). */
export async function checkCanaries(paths: HomePaths, id: string, rec: Recorder, source: 'check' | 'schedule'): Promise<{ name: string; verdict: Verdict | undefined }[]> {
  const baselines = loadLocks(paths).warden.get(id)?.canaries;
  if (!baselines) throw new WardenError('LOCK_MISSING', `warden.lock has no canary baselines for server '${id}'. Record them with: mcp-warden canary record ${id}`);
  const { server, results } = await sample(paths, id, CHECK_SAMPLES, defaultToolOf(baselines));
  const verdicts: { name: string; verdict: Verdict | undefined }[] = [];
  const judged = results.map(({ probe, obs, bar }) => ({ probe, bar, verdict: !baselines[probe.name] ? undefined : bar || !obs ? NOT_RUN : evaluate(baselines[probe.name] as Baseline, obs, server.canaryLatency) }));
  for (const { probe, bar } of judged) if (bar) say(`server '${id}': canary "${probe.name}" was not run: ${bar.why}. ${bar.next}`);
  // As at session start: latency-only failures are sampled again (one fresh launch per round, two rounds).
  for (let retry = 0; retry < 2 && judged.some((j) => latencyOnly(j.verdict)); retry++) {
    const again = (await sample(paths, id, CHECK_SAMPLES, defaultToolOf(baselines))).results;
    for (const j of judged.filter((x) => latencyOnly(x.verdict))) {
      const obs = again.find((r) => r.probe.name === j.probe.name)?.obs;
      if (obs) j.verdict = evaluate(baselines[j.probe.name] as Baseline, obs, server.canaryLatency);
    }
  }
  for (const { probe, verdict } of judged) {
    verdicts.push({ name: probe.name, verdict });
    const bar = judged.find((j) => j.probe === probe)?.bar;
    if (verdict) rec.record({ event: 'canary', server: id, probe: probe.name, result: verdict.pass ? 'pass' : 'fail', failed: verdict.failed, medianMs: verdict.medianMs, thresholdMs: verdict.thresholdMs, source, ...(bar ? { notRun: bar.code } : {}) });
  }
  return verdicts;
}

/** The verdict of a probe the warden did not call (docs/adr/0038). */
const NOT_RUN: Verdict = { pass: false, failed: ['not_run'], medianMs: 0, thresholdMs: 0 };

/** The tools of this listing proven equal to the lock (none without a lock entry, or when the instructions
 *  changed), whatever the server's posture. */
function provenByLock(paths: HomePaths, id: string, handshake: Handshake, tools: readonly LiveTool[]): Set<string> {
  const locks = loadLocks(paths);
  const entry = locks.tools.get(id);
  const extra = locks.warden.get(id);
  if (!entry) return new Set();
  const decisions = decide(diffSurface(entry, lockedExtra(extra), handshake, tools), 'enforce');
  return decisions.serverRefusal ? new Set() : provenTools(decisions);
}
