// mcp-warden benchmarks, each side by side with its baselines in one run (see docs/performance.md, issue 13).
//   npm run bench          (= npm run build && node bench/run.mjs)
//   node bench/run.mjs [--quick] [--launches N] [--rounds N] [--concurrent-rounds N] [--bulk-calls N]
//                      [--rss-calls N] [--relist-calls N] [--digest-mb N] [--only a,b] [--before OTHER/dist/cli/main.js]
//                      [--node PATH] [--server-node PATH]
// Sides: direct (the client spawns the server itself), raw relay (bench/raw-relay.mjs: a node process that only
// pipes bytes) and mcp-warden run; the warden − raw relay difference is the warden's own work. Everything goes
// through the CLI (`add`, `run`) in a temporary home; only the listing cost and the digest import dist modules.
// --quick: small counts, for a smoke test (< 1 minute). --only: launch,concurrent,relay,bulk,rss,listing,digest,relist.
// With --before, a second build of the warden (e.g. the previous commit's, built in a git worktree) is measured
// beside this one for the launches and round trips, so that what a change costs is read off one table.
// --node: the node the raw relay, the warden and the servers run on (default: the one running the bench).
// --server-node: the node the servers run on, on every side (e.g. test/nodes/node_modules/node24/bin/node: the
// module guard's hooks then run in the server's own thread, docs/adr/0032-in-thread-module-hooks.md).
// Prints a Markdown table per measure (target, met?) and writes bench/out/results.json.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bigFile, digestThroughput } from './lib/digest.mjs';
import { concurrentLaunch, launchTimes } from './lib/launch.mjs';
import { leftovers, removeDir, stopAll } from './lib/procs.mjs';
import { bulk, relayMemory, roundTrips } from './lib/relay.mjs';
import { relistCost } from './lib/relist.mjs';
import { report } from './lib/report.mjs';
import { add, benchDir, nodeOptions, RELAY_NODE, ROOT, sidesFor, WARDEN } from './lib/setup.mjs';
import { median } from './lib/stats.mjs';

const QUICK = process.argv.includes('--quick');
const arg = (name, full, quick) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : QUICK ? quick : full;
};
const strArg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const opts = {
  quick: QUICK,
  launches: arg('launches', 15, 2),
  launchWarmup: arg('launch-warmup', 2, 1),
  concurrent: arg('concurrent', 10, 10),
  concurrentRounds: arg('concurrent-rounds', 5, 1),
  concurrentWarmup: arg('concurrent-warmup', 1, 0),
  rounds: arg('rounds', 2000, 200),
  bulkCalls: arg('bulk-calls', 64, 8),
  rssCalls: arg('rss-calls', 1000, 300),
  relistCalls: arg('relist-calls', 2000, 200),
  digestMb: arg('digest-mb', 500, 50),
};
const ONLY = strArg('only')?.split(',');
const BEFORE = strArg('before') && path.resolve(strArg('before'));
nodeOptions();
const wanted = (m) => !ONLY || ONLY.includes(m);

/** Admitting a 1,000-tool listing (lossless parse, RFC 8785 and exact digests, per-field prints) vs a floor. */
async function listingCost() {
  const { readJson } = await import(path.join(ROOT, 'dist/protocol/json/reader.js'));
  const { ListingAdmitter } = await import(path.join(ROOT, 'dist/surface/admit.js'));
  const { createHash } = await import('node:crypto');
  const corpus = fs.readFileSync(path.join(ROOT, 'test/fixtures/surfaces/corpus.jsonl'), 'utf8').split('\n').filter(Boolean);
  const real = corpus.flatMap((l) => JSON.parse(JSON.parse(l).tools_list_body).result.tools);
  const tools = Array.from({ length: 1000 }, (_, i) => ({ ...real[i % real.length], name: `tool_${i}` }));
  const body = Buffer.from(JSON.stringify({ tools }));
  const ours = [];
  const floor = [];
  for (let i = 0; i < 30; i++) {
    let t = process.hrtime.bigint();
    new ListingAdmitter().page(readJson(body, { maxBytes: 64 << 20, maxDepth: 64 }));
    ours.push(Number(process.hrtime.bigint() - t) / 1e6);
    t = process.hrtime.bigint();
    for (const tool of JSON.parse(body.toString()).tools) createHash('sha256').update(JSON.stringify(tool)).digest('hex');
    floor.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return { bytes: body.length, oursMs: median(ours.slice(5)), floorMs: median(floor.slice(5)) };
}

const git = (...a) => {
  try {
    return execFileSync('git', ['-C', ROOT, ...a], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
};
const results = {
  date: new Date().toISOString(),
  commit: git('rev-parse', '--short', 'HEAD'),
  dirty: git('status', '--porcelain', '--', 'src') ? 'src/ has uncommitted changes' : undefined,
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, relayNode: RELAY_NODE, loadavgStart: os.loadavg() },
  options: { ...opts, only: ONLY, before: BEFORE },
  errors: {},
};
const log = (msg) => process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(0)} s] ${msg}\n`);
const started = performance.now();

/** Runs one measure; a failure is recorded and reported, and the others still run. */
async function measure(name, f) {
  if (!wanted(name)) return;
  log(`${name}…`);
  try {
    results[name] = await f();
  } catch (err) {
    results.errors[name] = err.stack ?? String(err);
    log(`${name} failed: ${err.message}`);
    await stopAll();
  }
}

const { dir, servers } = benchDir();
try {
  const uses = { launch: ['basic', 'everything'], concurrent: ['basic', 'everything'], relay: ['everything'], bulk: ['bulk'], rss: ['everything'], relist: ['everything'] };
  const ids = Object.keys(servers).filter((id) => Object.entries(uses).some(([m, list]) => wanted(m) && list.includes(id)));
  log(`enrolling ${ids.join(', ')} with mcp-warden add in ${dir}`);
  const home = path.join(dir, 'home');
  const homes = { warden: { warden: WARDEN, home } };
  for (const id of ids) add(WARDEN, home, id, servers[id]);
  if (BEFORE) {
    homes.before = { warden: BEFORE, home: path.join(dir, 'home-before') };
    for (const id of ids.filter((i) => i !== 'bulk')) add(BEFORE, homes.before.home, id, servers[id]);
  }
  const sides = (id, withBefore = true) => sidesFor(servers[id], id, withBefore ? homes : { warden: homes.warden });

  await measure('launch', async () => ({
    basic: await launchTimes(sides('basic'), { launches: opts.launches, warmup: opts.launchWarmup }),
    everything: await launchTimes(sides('everything'), { launches: opts.launches, warmup: opts.launchWarmup }),
  }));
  await measure('concurrent', async () => {
    const c = { count: opts.concurrent, rounds: opts.concurrentRounds, warmup: opts.concurrentWarmup };
    const out = { basic: await concurrentLaunch(sides('basic', false), c) };
    if (!QUICK) out.everything = await concurrentLaunch(sides('everything', false), c);
    return out;
  });
  await measure('relay', () => roundTrips(sides('everything'), { calls: opts.rounds, warmup: QUICK ? 50 : 200 }));
  await measure('bulk', () => bulk(sides('bulk', false), { calls: opts.bulkCalls, warmup: QUICK ? 2 : 4 }));
  await measure('rss', () => {
    const { raw, warden, before } = sides('everything');
    return relayMemory({ raw, warden, ...(before ? { before } : {}) }, { calls: opts.rssCalls });
  });
  await measure('listing', listingCost);
  await measure('digest', () => {
    const file = bigFile(dir, opts.digestMb);
    try {
      return digestThroughput(dir, file);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
  await measure('relist', () => relistCost({ every: [50, 200], calls: opts.relistCalls, warmup: QUICK ? 50 : 200, home }));
} catch (err) {
  results.errors.setup = err.stack ?? String(err);
  log(`setup failed: ${err.message}`);
} finally {
  await stopAll();
  const left = leftovers([dir]);
  removeDir(dir);
  if (left.length) results.errors.leftovers = left;
}
results.machine.loadavgEnd = os.loadavg();
results.seconds = (performance.now() - started) / 1000;

fs.mkdirSync(path.join(ROOT, 'bench/out'), { recursive: true });
fs.writeFileSync(path.join(ROOT, 'bench/out/results.json'), JSON.stringify(results, null, 2) + '\n');
console.log(report(results));
if (Object.keys(results.errors).length) {
  console.error(`errors: ${Object.keys(results.errors).join(', ')} (details in bench/out/results.json)`);
  for (const [k, v] of Object.entries(results.errors)) console.error(`${k}: ${Array.isArray(v) ? v.join('\n  ') : v.split('\n')[0]}`);
  process.exitCode = 1;
}
