// The warm package-tree digest and the re-check after launch, for server-everything's closure (ADR 0020).
//   node bench/tree-walk.mjs [--runs N] [--rounds N] [--before OTHER/dist]
// Needs a build. Warms a digest cache with one digest, then times N runs of each variant per round, the variants
// interleaved round by round so that a load spike on a shared machine hits them all alike. For each: wall time and
// the time this thread was busy (event-loop utilization), median and minimum, in ms. Beside the product's walk and
// re-check it times the same lstat calls done one by one and on libuv's thread pool (callback fs.lstat, a bound on
// calls in flight), to see on another machine whether the pool pays. With --before, another build's
// digestPackageTree and recheckPlan are timed in the same rounds (and its digestPackageTreeAsync when it has one:
// commit c2dbb3f does). Run under UV_THREADPOOL_SIZE=N to try other pool sizes.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TREE = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const RUNS = Number(arg('runs', 10));
const ROUNDS = Number(arg('rounds', 3));
const BEFORE = arg('before', undefined);

async function load(dist) {
  const mod = async (f) => import(path.join(path.resolve(dist), f));
  return { ...(await mod('attest/tree.js')), ...(await mod('attest/cache.js')), ...(await mod('attest/recheck.js')), ...(await mod('attest/plan.js')) };
}

/** lstat of every path with at most `limit` calls in flight on the thread pool. */
function poolLstat(paths, limit) {
  return new Promise((resolve) => {
    let next = 0;
    let left = paths.length;
    const start = () => {
      const p = paths[next++];
      fs.lstat(p, { bigint: true }, () => {
        if (next < paths.length) start();
        if (--left === 0) resolve();
      });
    };
    for (let i = 0; i < Math.min(limit, paths.length); i++) start();
  });
}

const now = await load(path.join(ROOT, 'dist'));
const before = BEFORE ? await load(BEFORE) : undefined;
const cache = new now.DigestCache();
const spec = { serverId: 'everything', command: process.execPath, args: [path.join(TREE, 'dist/index.js')], cwd: undefined, trustedPath: path.dirname(process.execPath) };
const plan = await now.planLaunch(spec, cache);
const tree = now.digestPackageTree(TREE, cache);
const paths = [...tree.keys.keys()];
console.log(`${TREE}: ${tree.packages} packages, ${tree.files} entries, ${tree.keys.size} stat keys; UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}; ${RUNS} runs x ${ROUNDS} rounds`);

const variants = {
  ...(before ? { 'before: digestPackageTree': () => before.digestPackageTree(TREE, cache) } : {}),
  ...(before?.digestPackageTreeAsync ? Object.fromEntries([8, 32, 64].map((n) => [`before: digestPackageTreeAsync, ${n} in flight`, () => before.digestPackageTreeAsync(TREE, cache, n)])) : {}),
  digestPackageTree: () => now.digestPackageTree(TREE, cache),
  ...(before ? { 'before: recheckPlan': () => before.recheckPlan(plan) } : {}),
  recheckPlan: () => now.recheckPlan(plan),
  [`lstat of the ${paths.length} paths, one by one`]: () => paths.forEach((p) => fs.lstatSync(p, { bigint: true })),
  ...Object.fromEntries([8, 32, 64].map((n) => [`lstat of the ${paths.length} paths on the pool, ${n} in flight`, () => poolLstat(paths, n)])),
};
const wall = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
const busy = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, f] of Object.entries(variants)) {
    const t = await f(); // one more warm-up, and a check
    if (t?.sha256 && t.sha256 !== tree.sha256) throw new Error(`${name} gave another digest`);
    for (let i = 0; i < RUNS; i++) {
      await new Promise((r) => setImmediate(r));
      const elu = performance.eventLoopUtilization();
      const start = performance.now();
      await f();
      wall[name].push(performance.now() - start);
      busy[name].push(performance.eventLoopUtilization(elu).active);
    }
  }
}
const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
console.log('| variant | wall median | wall min | busy median | busy min |\n|---|---|---|---|---|');
for (const name of Object.keys(variants)) {
  console.log(`| ${name} | ${q(wall[name], 0.5).toFixed(1)} | ${q(wall[name], 0).toFixed(1)} | ${q(busy[name], 0.5).toFixed(1)} | ${q(busy[name], 0).toFixed(1)} |`);
}
