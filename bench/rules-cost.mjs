// What the operator's rules cost (issue 14), each beside the same work without rules, in one run, interleaved.
//   node bench/rules-cost.mjs [--runs N] [--calls N] [--only listing|calls]
// Needs a build (npm run build).
// 1. Listing, in-process: the 1,000-tool listing of bench/listing-cost.mjs (the corpus tools, ~1 MiB), admitted
//    as a client's tools/list page is (readJson + ListingAdmitter.page), then
//      - no rules: nothing more (the page's bytes are forwarded as they are);
//      - rules, first listing of a session: every tool classified `read`, each verdict made (the handshake's);
//      - rules, nothing shown differently: the same, on a session that judged the listing before (verdicts are
//        kept while a tool's bytes stay the same, as they are on a client's listing after the handshake);
//      - rules that rewrite the page: every tool also given an operator description, so the page is
//        re-serialized (the cost the client pays for any changed tool on a page).
//    Sides alternate run by run after warm-ups; medians of wall and CPU ms.
// 2. Calls, end to end: three servers of one home running bench/servers/bulk.mjs through `mcp-warden run`, no
//    rules / rules (the tool classified read) / a fixed parameter (the warden adds `bytes: 64`, the other sides
//    send it), tools/call round trips in alternating blocks; p50 and p99 ms.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fs from 'node:fs';
import { add, benchDir, configure, WARDEN } from './lib/setup.mjs';
import { open } from './lib/session.mjs';
import { stopAll } from './lib/procs.mjs';
import { median, summary } from './lib/stats.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const opt = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const RUNS = Number(opt('runs', 41));
const CALLS = Number(opt('calls', 2000));
const ONLY = opt('only', undefined);
const DIST = path.join(ROOT, 'dist');
const load = (p) => import(pathToFileURL(path.join(DIST, p)).href);

async function listing() {
  const { readJson } = await load('protocol/json/reader.js');
  const { ListingAdmitter } = await load('surface/admit.js');
  const { CallRules } = await load('proxy/call-rules.js');
  const { sessionRules } = await load('rules/gate.js');
  const { parseRules } = await load('rules/schema.js');
  const { serialize } = await load('protocol/json/write.js');

  const corpus = fs.readFileSync(path.join(ROOT, 'test/fixtures/surfaces/corpus.jsonl'), 'utf8').split('\n').filter(Boolean);
  const real = corpus.flatMap((l) => JSON.parse(JSON.parse(l).tools_list_body).result.tools);
  const tools = Array.from({ length: 1000 }, (_, i) => ({ ...real[i % real.length], name: `tool_${i}` }));
  const body = Buffer.from(JSON.stringify({ tools }));
  const quiet = { cfg: { serverId: 'bench', audit() {}, report() {} }, stats: { refusedCalls: 0 }, toClient() {} };
  const classified = parseRules({ tools: Object.fromEntries(tools.map((t) => [t.name, { kind: 'read', allowHintMismatch: true }])) });
  const described = parseRules({ tools: Object.fromEntries(tools.map((t) => [t.name, { kind: 'read', allowHintMismatch: true, description: 'Operator wording.' }])) });

  const admit = () => {
    const value = readJson(body, { maxBytes: 64 << 20, maxDepth: 64 });
    const admitter = new ListingAdmitter();
    admitter.page(value);
    return { value, tools: admitter.tools };
  };
  // A session's rules judge the listing once at the handshake (the first-time cost, measured as its own side)
  // and keep each verdict while the tool's bytes stay the same; the client's own listings then reuse them.
  const primed = (rules) => {
    const r = new CallRules(quiet, sessionRules(rules, undefined));
    r.listed(admit().tools, 'relist');
    return r;
  };
  const steady = { classified: primed(classified), described: primed(described) };
  const sides = {
    'no rules': () => admit(),
    'rules, first listing of a session': () => new CallRules(quiet, sessionRules(classified, undefined)).page(admit().tools),
    'rules, nothing shown differently': () => steady.classified.page(admit().tools),
    'rules that rewrite the page': () => {
      const { value, tools: admitted } = admit();
      const shown = steady.described.page(admitted);
      return serialize(new Map([...value].map(([k, v]) => [k, k === 'tools' ? shown.values : v])));
    },
  };
  const names = Object.keys(sides);
  const samples = Object.fromEntries(names.map((n) => [n, { wall: [], cpu: [] }]));
  const WARMUP = 10;
  for (let i = 0; i < WARMUP + RUNS; i++) {
    for (const n of i % 2 ? [...names].reverse() : names) {
      const cpu = process.cpuUsage();
      const t = process.hrtime.bigint();
      sides[n]();
      const wall = Number(process.hrtime.bigint() - t) / 1e6;
      const c = process.cpuUsage(cpu);
      if (i >= WARMUP) (samples[n].wall.push(wall), samples[n].cpu.push((c.user + c.system) / 1e3));
    }
  }
  const base = median(samples['no rules'].cpu);
  console.log(`\nlisting: ${tools.length} tools, ${(body.length / 1024).toFixed(0)} KiB; median of ${RUNS} runs after ${WARMUP} warm-ups, sides alternating`);
  console.log(`${''.padEnd(40)}  wall ms   cpu ms   cpu vs no rules`);
  for (const n of names) {
    const cpu = median(samples[n].cpu);
    console.log(`${n.padEnd(40)}${median(samples[n].wall).toFixed(1).padStart(9)}${cpu.toFixed(1).padStart(9)}${`${(cpu / base).toFixed(2)}×`.padStart(18)}`);
  }
}

async function calls() {
  const { dir, servers } = benchDir('warden-rules-bench-');
  const home = path.join(dir, 'home');
  for (const id of ['plain', 'ruled', 'fixed']) add(WARDEN, home, id, servers.bulk);
  configure(home, 'ruled', (s) => (s.rules = { tools: { bulk: { kind: 'read' } } }));
  configure(home, 'fixed', (s) => (s.rules = { tools: { bulk: { kind: 'read', fixed: { bytes: 64 } } } }));
  const run = (id) => [process.execPath, [WARDEN, '--home', home, 'run', id]];
  const sessions = { 'no rules': await open(run('plain')), 'rules (classified read)': await open(run('ruled')), 'rules, a fixed parameter': await open(run('fixed')) };
  const args = { 'no rules': { bytes: 64 }, 'rules (classified read)': { bytes: 64 }, 'rules, a fixed parameter': {} };
  const names = Object.keys(sessions);
  const ms = Object.fromEntries(names.map((n) => [n, []]));
  const BLOCK = 100;
  const WARMUP = 200;
  try {
    for (let done = -WARMUP; done < CALLS; done += BLOCK) {
      for (const n of done / BLOCK % 2 ? [...names].reverse() : names) {
        for (let i = 0; i < BLOCK; i++) {
          const t = process.hrtime.bigint();
          const r = await sessions[n].request('tools/call', { name: 'bulk', arguments: args[n] });
          if (!r.result || r.result.isError) throw new Error(`${n}: ${JSON.stringify(r).slice(0, 300)} ${sessions[n].stderr()}`);
          if (done >= 0) ms[n].push(Number(process.hrtime.bigint() - t) / 1e6);
        }
      }
    }
  } finally {
    await Promise.all(Object.values(sessions).map((s) => s.close()));
  }
  const base = summary(ms['no rules']);
  console.log(`\ntools/call round trips through mcp-warden run, ${CALLS} per side after ${WARMUP} warm-ups, in alternating blocks of ${BLOCK}`);
  console.log(`${''.padEnd(28)}   p50 ms   p99 ms   p50 vs no rules`);
  for (const n of names) {
    const s = summary(ms[n]);
    console.log(`${n.padEnd(28)}${s.p50.toFixed(3).padStart(9)}${s.p99.toFixed(3).padStart(9)}${`${s.p50 - base.p50 >= 0 ? '+' : '−'}${Math.abs(s.p50 - base.p50).toFixed(3)} ms`.padStart(18)}`);
  }
}

try {
  if (!ONLY || ONLY === 'listing') await listing();
  if (!ONLY || ONLY === 'calls') await calls();
} finally {
  await stopAll();
}
