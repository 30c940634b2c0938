// Admitting a 1,000-tool listing against its floor (issue 13: the target is at most 2× the floor).
//   node bench/listing-cost.mjs [--runs N] [--warmup N] [--dist OTHER/dist] [--only ours|floor]
// Needs a build (npm run build). The listing is built exactly as bench/run.mjs's listingCost() builds it: the
// real tools of test/fixtures/surfaces/corpus.jsonl, repeated to 1,000 and renamed tool_0…tool_999 (~1 MiB).
//   ours:  readJson (lossless) + ListingAdmitter.page (admissibility, RFC 8785 and exact digests per tool)
//   floor: JSON.parse + JSON.stringify + sha256 per tool, on the same bytes
// Both sides run interleaved in one process, alternating which goes first so that garbage one side leaves
// is not always collected on the other's clock; warm-up runs are discarded and the medians compared.
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

const samples = { ours: [], floor: [] };
for (let i = 0; i < WARMUP + RUNS; i++) {
  const order = i % 2 ? ['floor', 'ours'] : ['ours', 'floor'];
  for (const side of order) {
    if (ONLY && side !== ONLY) continue;
    const ms = timed(side === 'ours' ? ours : floor);
    if (i >= WARMUP) samples[side].push(ms);
  }
}

const f = (x) => x.toFixed(1).padStart(6);
const med = (side, k) => median(samples[side].map((s) => s[k]));
console.log(`listing: ${tools.length} tools, ${(body.length / 1024).toFixed(0)} KiB; build: ${path.relative(process.cwd(), DIST) || '.'}; median of ${RUNS} runs after ${WARMUP} warm-up`);
console.log('                                                        wall ms  cpu ms');
if (!ONLY || ONLY === 'floor') console.log(`floor (JSON.parse + JSON.stringify + sha256 per tool):   ${f(med('floor', 'wall'))}  ${f(med('floor', 'cpu'))}`);
if (!ONLY || ONLY === 'ours') console.log(`mcp-warden (readJson + ListingAdmitter.page):            ${f(med('ours', 'wall'))}  ${f(med('ours', 'cpu'))}`);
if (!ONLY) {
  const r = (k) => (med('ours', k) / med('floor', k)).toFixed(2);
  console.log(`ratio to the floor (target ≤ 2×):                         ${r('wall').padStart(5)}×  ${r('cpu').padStart(5)}×`);
}
