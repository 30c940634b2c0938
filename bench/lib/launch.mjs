// Launch measures: spawn → initialize result, one session at a time and N at once, interleaved across sides.
import { initialize, session, timeToInit } from './session.mjs';
import { rotate, summary } from './stats.mjs';

/**
 * One launch per side per round, the sides in a rotating order; `warmup` launches per side first (page cache,
 * the warden's digest cache, the server's own caches), not counted. Returns { side: summary(ms) }.
 */
export async function launchTimes(sides, { launches, warmup }) {
  const names = Object.keys(sides);
  for (let i = 0; i < warmup; i++) for (const n of rotate(names, i)) await timeToInit(sides[n]);
  const ms = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < launches; i++) for (const n of rotate(names, i)) ms[n].push(await timeToInit(sides[n]));
  return Object.fromEntries(names.map((n) => [n, { ...summary(ms[n]), samples: ms[n] }]));
}

/** `count` sessions spawned at once; ms until every one has its initialize result (all closed afterwards). */
async function allAtOnce([cmd, args], count) {
  const sessions = [];
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < count; k++) sessions.push(session(cmd, args));
  const results = await Promise.allSettled(sessions.map((s) => initialize(s)));
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  await Promise.all(sessions.map((s) => s.close()));
  const failed = results.filter((r) => r.status === 'rejected');
  if (failed.length) throw new Error(`${failed.length} of ${count} sessions failed to start: ${failed[0].reason.message}`);
  return ms;
}

/** Rounds of `count` launches at once per side, the sides in a rotating order, after one warm-up round each. */
export async function concurrentLaunch(sides, { count, rounds, warmup }) {
  const names = Object.keys(sides);
  for (let i = 0; i < warmup; i++) for (const n of rotate(names, i)) await allAtOnce(sides[n], count);
  const ms = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < rounds; i++) for (const n of rotate(names, i)) ms[n].push(await allAtOnce(sides[n], count));
  return Object.fromEntries(names.map((n) => [n, { ...summary(ms[n]), samples: ms[n] }]));
}
