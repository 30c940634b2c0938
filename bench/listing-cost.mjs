// Admitting a 1,000-tool listing against its floor (issue 13: the target is at most 2× the floor).
//   node bench/listing-cost.mjs [--runs N] [--warmup N] [--dist OTHER/dist] [--only ours|floor]
// Needs a build (npm run build). The listing is built exactly as bench/run.mjs's listingCost() builds it: the
// real tools of test/fixtures/surfaces/corpus.jsonl, repeated to 1,000 and renamed tool_0…tool_999 (~1 MiB).
//   ours:  readJson (lossless) + ListingAdmitter.page (admissibility, RFC 8785 and exact digests per tool)
//   floor: JSON.parse + JSON.stringify + sha256 per tool, on the same bytes
// Both sides run interleaved in one process, alternating run by run and then in blocks (see measure() below);
// warm-up runs are discarded and the medians compared.
// --dist measures another build (e.g. a worktree of the commit before) with the same script; --only runs one
// side (for node --cpu-prof).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const opt = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const RUNS = Number(opt('runs', 41));
const WARMUP = Number(opt('warmup', 10));
const DIST = path.resolve(opt('dist', path.join(ROOT, 'dist')));
const ONLY = opt('only', undefined);
if (RUNS < 25) throw new Error('--runs must be at least 25');

const { readJson } = await import(pathToFileURL(path.join(DIST, 'protocol/json/reader.js')).href);
const { ListingAdmitter } = await import(pathToFileURL(path.join(DIST, 'surface/admit.js')).href);

const corpus = fs.readFileSync(path.join(ROOT, 'test/fixtures/surfaces/corpus.jsonl'), 'utf8').split('\n').filter(Boolean);
const real = corpus.flatMap((l) => JSON.parse(JSON.parse(l).tools_list_body).result.tools);
const tools = Array.from({ length: 1000 }, (_, i) => ({ ...real[i % real.length], name: `tool_${i}` }));
const body = Buffer.from(JSON.stringify({ tools }));

function ours() {
  new ListingAdmitter().page(readJson(body, { maxBytes: 64 << 20, maxDepth: 64 }));
}

function floor() {
  for (const tool of JSON.parse(body.toString()).tools) createHash('sha256').update(JSON.stringify(tool)).digest('hex');
}

/** Wall-clock and CPU milliseconds of one run (CPU time, of every thread of the process, GC helpers too, is
 *  the steadier of the two on a loaded machine). */
function timed(f) {
  const cpu = process.cpuUsage();
  const t = process.hrtime.bigint();
  f();
  const wall = Number(process.hrtime.bigint() - t) / 1e6;
  const c = process.cpuUsage(cpu);
  return { wall, cpu: (c.user + c.system) / 1e3 };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// Two ways to interleave the sides. Alternating, as bench/run.mjs does: the garbage one run leaves is
// collected during whichever run comes next, so a side that allocates less moves collection onto the other's
// clock. In blocks: BLOCK runs of one side, then BLOCK of the other, the first two of each block discarded (they
// collect what the other side left): each side in its own steady state, paying for its own collections.
// (A forced full collection before each run was tried and dropped: the run after it pays for concurrent
// sweeping and recommitted memory, which no real admission does.)
const BLOCK = 6;

function measure(inBlocks) {
  const samples = { ours: [], floor: [] };
  const sides = ONLY ? [ONLY] : ['ours', 'floor'];
  const run = (side, keep) => {
    const ms = timed(side === 'ours' ? ours : floor);
    if (keep) samples[side].push(ms);
  };
  if (!inBlocks) {
    for (let i = 0; i < WARMUP + RUNS; i++) for (const side of i % 2 ? [...sides].reverse() : sides) run(side, i >= WARMUP);
  } else {
    for (let b = 0; samples[sides[0]].length < RUNS || samples[sides.at(-1)].length < RUNS; b++) {
      for (const side of b % 2 ? [...sides].reverse() : sides) for (let i = 0; i < BLOCK; i++) run(side, i >= 2 && b >= 2);
    }
  }
  const med = (side, k) => median(samples[side].map((x) => x[k]));
  return Object.fromEntries(sides.map((side) => [side, { wall: med(side, 'wall'), cpu: med(side, 'cpu') }]));
}

const modes = [measure(false), measure(true)];
const f = (x) => x.toFixed(1).padStart(7);
const row = (label, side) => console.log(`${label.padEnd(56)}${modes.map((m) => `${f(m[side].wall)} ${f(m[side].cpu)}`).join('    ')}`);
console.log(`listing: ${tools.length} tools, ${(body.length / 1024).toFixed(0)} KiB; build: ${path.relative(process.cwd(), DIST) || '.'}; median of ${RUNS} runs after ${WARMUP} warm-up, the sides interleaved`);
console.log(`${''.padEnd(56)}alternating        in blocks of ${BLOCK} (steady state)`);
console.log(`${''.padEnd(56)}wall ms  cpu ms    wall ms  cpu ms`);
if (!ONLY || ONLY === 'floor') row('floor (JSON.parse + JSON.stringify + sha256 per tool)', 'floor');
if (!ONLY || ONLY === 'ours') row('mcp-warden (readJson + ListingAdmitter.page)', 'ours');
if (!ONLY) {
  const r = (m, k) => `${(m.ours[k] / m.floor[k]).toFixed(2)}×`.padStart(7);
  console.log(`${'ratio to the floor (target ≤ 2×)'.padEnd(56)}${modes.map((m) => `${r(m, 'wall')} ${r(m, 'cpu')}`).join('    ')}`);
}
