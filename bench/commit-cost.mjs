// What replacing several trust files as one step costs (ADR 0027), beside writing them one after the other, in
// one run, interleaved.
//   node bench/commit-cost.mjs [--runs N]
// Needs a build (npm run build). Five files the size a one-server bundle apply writes (servers.json 0.6 KB,
// allowlist.json 0.8 KB, tools.lock 1.8 KB, warden.lock 2.6 KB, bundle-state.json 0.2 KB), in a fresh home under
// the system's temporary directory, each side holding the files' locks as apply does:
//   - one by one: writeAtomic five times (what apply did before: temporary file, fsync, rename, fsync of the
//     directory, for each file);
//   - one step: commitFiles (each file staged and fsynced, the journal written, five renames, one fsync of the
//     directory, the journal removed).
// Sides alternate run by run after warm-ups; median and p90 of wall ms. The fsyncs dominate both: the figure
// depends on the filesystem under the temporary directory (say which).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from './lib/stats.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const opt = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const RUNS = Number(opt('runs', 41));
const load = (p) => import(pathToFileURL(path.join(ROOT, 'dist', p)).href);
const { writeAtomic } = await load('store/atomic.js');
const { commitFiles, withFileLocks } = await load('store/update.js');

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'warden-commit-bench-'));
const sizes = { 'servers.json': 600, 'allowlist.json': 800, 'tools.lock': 1800, 'warden.lock': 2600, 'bundle-state.json': 200 };
const writes = (n) => Object.entries(sizes).map(([name, size]) => ({ file: path.join(home, name), data: `${'x'.repeat(size - 12)} run ${String(n).padStart(6, '0')}\n` }));
const files = Object.keys(sizes).map((n) => path.join(home, n));

const sides = {
  'one by one': (n) => withFileLocks(files, 'bench', () => { for (const w of writes(n)) writeAtomic(w.file, w.data); }),
  'one step': (n) => withFileLocks(files, 'bench', () => commitFiles(writes(n), 'the bench change')),
};
const times = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
let n = 0;
for (let run = 0; run < RUNS + 5; run++) {
  for (const [name, side] of run % 2 === 0 ? Object.entries(sides) : Object.entries(sides).reverse()) {
    const t0 = process.hrtime.bigint();
    await side(n++);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (run >= 5) times[name].push(ms);
  }
}
fs.rmSync(home, { recursive: true, force: true });
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)];
console.log(`${RUNS} runs each, interleaved; temporary directory ${os.tmpdir()}`);
for (const [name, xs] of Object.entries(times)) console.log(`${name.padEnd(12)} median ${median(xs).toFixed(2)} ms   p90 ${p90(xs).toFixed(2)} ms`);
