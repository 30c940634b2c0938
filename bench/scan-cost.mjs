// The first-trust scan of a 1,000-tool listing against the listing's own admission (issue 30: within 2×).
//   node bench/scan-cost.mjs [--runs N] [--warmup N]
// Needs a build (npm run build). The listing is bench/listing-cost.mjs's: the real tools of
// test/fixtures/surfaces/corpus.jsonl repeated to 1,000 and renamed tool_0…tool_999 (~1 MiB), with the other 35
// corpus servers as enrolled neighbours (so the shadowing index is a real one).
//   admission: readJson (lossless) + ListingAdmitter.page (what a lock or a session pays for the listing)
//   scan:      scanSurface over the admitted tools (every string, names, parameters, neighbours' names)
// Run alternately in one process, warm-up runs discarded; medians of CPU time compared.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const opt = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const RUNS = opt('runs', 41);
const WARMUP = opt('warmup', 10);
const dist = (p) => import(pathToFileURL(path.join(ROOT, 'dist', p)).href);
const { readJson } = await dist('protocol/json/reader.js');
const { ListingAdmitter } = await dist('surface/admit.js');
const { scanSurface } = await dist('scan/surface.js');

const corpus = fs.readFileSync(path.join(ROOT, 'test/fixtures/surfaces/corpus.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const real = corpus.flatMap((r) => JSON.parse(r.tools_list_body).result.tools);
const tools = Array.from({ length: 1000 }, (_, i) => ({ ...real[i % real.length], name: `tool_${i}` }));
const body = Buffer.from(JSON.stringify({ tools }));
const neighbours = corpus.slice(1).map((r) => ({ server: r.id, tools: JSON.parse(r.tools_list_body).result.tools.map((t) => t.name) }));

let admitted;
const admission = () => {
  const a = new ListingAdmitter();
  a.page(readJson(body, { maxBytes: 64 << 20, maxDepth: 64 }));
  admitted = a;
};
admission();
const items = admitted.tools.map((t) => ({ kind: 'tool', name: t.name, value: t.value }));
if (items.length !== 1000) throw new Error(`expected 1000 admitted tools, got ${items.length}`);
const scan = () => scanSurface('bench', items, neighbours);
const findings = scan().findings.length;

const cpuMs = (f) => {
  const c = process.cpuUsage();
  f();
  const d = process.cpuUsage(c);
  return (d.user + d.system) / 1e3;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];
const a = [];
const s = [];
for (let i = 0; i < WARMUP + RUNS; i++) {
  const x = cpuMs(admission);
  const y = cpuMs(scan);
  if (i >= WARMUP) (a.push(x), s.push(y));
}
const ma = median(a);
const ms = median(s);
console.log(`node ${process.version}, ${RUNS} runs after ${WARMUP} warm-up, ${(body.length / 1048576).toFixed(2)} MiB listing, ${findings} findings`);
console.log(`admission ${ma.toFixed(1)} ms CPU · scan ${ms.toFixed(1)} ms CPU · scan/admission ${(ms / ma).toFixed(2)}× (target ≤ 2×)`);
