// The cost of periodic re-listing on round-trip latency (ADR 0008), with its baseline (a session that never
// re-lists) in the same run:
//   node bench/relist-cost.mjs [--calls 2000] [--every 50,200]        (needs a build: npm run build)
// Enrolls server-everything in a temporary home it creates and removes (your own home is not touched), starts one
// `mcp-warden run` session per relistEvery.calls setting and one that never re-lists, and times echo calls on
// them in alternating blocks of 100.
import { NEVER, relistCost } from './lib/relist.mjs';
import { fmt, signed } from './lib/stats.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const calls = Number(arg('calls', 2000));
const every = String(arg('every', '50,200')).split(',').map(Number);
const r = await relistCost({ calls, every });
console.log(`| relistEvery.calls (${calls} echo calls each, server-everything) | p50 ms | p90 ms | p99 ms | max ms | p99 − never |`);
console.log('|---|---|---|---|---|---|');
for (const n of [NEVER, ...every]) {
  const s = r[n];
  console.log(`| ${n === NEVER ? 'never (baseline)' : n} | ${fmt(s.p50, 3)} | ${fmt(s.p90, 3)} | ${fmt(s.p99, 3)} | ${fmt(s.max, 1)} | ${n === NEVER ? '' : signed(s.p99 - r[NEVER].p99, 3)} |`);
}
