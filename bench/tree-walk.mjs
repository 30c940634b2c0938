// The warm package-tree digest and the re-check after launch, for server-everything's closure (ADR 0019).
//   node bench/tree-walk.mjs [--runs N] [--rounds N] [--before OTHER/dist]
// Needs a build. Warms a digest cache with one digest, then times N runs of each variant (median and minimum, in
// ms), the variants interleaved round by round so that a load spike on a shared machine hits them all alike.
// With --before, another build's digestPackageTree and recheckPlan (e.g. the previous commit's, built in a git
// worktree) are timed in the same rounds. Run it under UV_THREADPOOL_SIZE=N to try other pool sizes.
import path from 'node:path';
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

const now = await load(path.join(ROOT, 'dist'));
const before = BEFORE ? await load(BEFORE) : undefined;
const cache = new now.DigestCache();
const spec = { serverId: 'everything', command: process.execPath, args: [path.join(TREE, 'dist/index.js')], cwd: undefined, trustedPath: path.dirname(process.execPath) };
const plan = await now.planLaunch(spec, cache);
const tree = now.digestPackageTree(TREE, cache);
console.log(`${TREE}: ${tree.packages} packages, ${tree.files} entries, ${tree.keys.size} stat keys; UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}; ${RUNS} runs x ${ROUNDS} rounds`);

const variants = {
  ...(before ? { 'before: digestPackageTree (sync)': () => before.digestPackageTree(TREE, cache) } : {}),
  'digestPackageTree (sync)': () => now.digestPackageTree(TREE, cache),
  ...Object.fromEntries([4, 8, 16, 32, 64].map((n) => [`digestPackageTreeAsync, ${n} in flight`, () => now.digestPackageTreeAsync(TREE, cache, n)])),
  ...(before ? { 'before: recheckPlan (sync)': () => before.recheckPlan(plan) } : {}),
  ...Object.fromEntries([1, 8, 32, 64].map((n) => [`recheckPlan, ${n} in flight`, () => now.recheckPlan(plan, n)])),
};
const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, f] of Object.entries(variants)) {
    const t = await f(); // a result, checked below; also one more warm-up
    if (t?.sha256 && t.sha256 !== tree.sha256) throw new Error(`${name} gave another digest`);
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      await f();
      times[name].push(performance.now() - start);
    }
  }
}
const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
console.log('| variant | median ms | min ms |\n|---|---|---|');
for (const [name, xs] of Object.entries(times)) console.log(`| ${name} | ${q(xs, 0.5).toFixed(1)} | ${q(xs, 0).toFixed(1)} |`);
