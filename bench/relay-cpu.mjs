// The relaying process's own CPU time per tools/call (user and sys from /proc/PID/stat, 10 ms ticks: use a
// few thousand calls), its server's, and the relay's main-thread context switches, besides latency; sides
// raw relay and mcp-warden run (and --before), in alternating blocks of calls, round after round on the same
// sessions (round 0 is what bench/run.mjs measures; later rounds show the warden once its code is optimized).
//   node bench/relay-cpu.mjs [--server everything|bulk] [--calls N] [--rounds R] [--warmup N]
//                            [--before OTHER/dist/cli/main.js] [--store-forward] [--slow] [--hold]
// --server bulk: 1 MiB results (bench/servers/bulk.mjs), in blocks of 8, with MB/s.
// --store-forward: also bench/store-forward-relay.mjs (a raw relay that holds each server line until it ends).
// --slow: lists the calls over 1 ms of each side. --hold: prints the pids and waits for SIGUSR2 before
// measuring (attach perf, strace or perf trace meanwhile).
// WARDEN_NODE_ARGS='--trace-gc ...': node options for the warden side only (with BENCH_TOLERANT=1 when they
// print to stdout).
import fs from 'node:fs';
import path from 'node:path';
import { add, benchDir, sidesFor, WARDEN } from './lib/setup.mjs';
import { open } from './lib/session.mjs';
import { removeDir, stopAll } from './lib/procs.mjs';
import { median, quantile } from './lib/stats.mjs';

const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const CALLS = Number(arg('calls', 2000));
const ROUNDS = Number(arg('rounds', 3));
const BEFORE = arg('before') && path.resolve(arg('before'));
const TICK = 100; // USER_HZ

function cpuMs(pid) {
  const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICK;
}
function sysMs(pid) {
  const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[12]) * 1000) / TICK;
}
function ctx(pid) {
  const st = fs.readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  return [Number(/\nvoluntary_ctxt_switches:\s+(\d+)/.exec(st)[1]), Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(st)[1])];
}
const childrenOf = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

const { dir, servers } = benchDir('warden-relaycpu-');
try {
  const home = path.join(dir, 'home');
  const SERVER = arg('server', 'everything');
  add(WARDEN, home, SERVER, servers[SERVER]);
  const homes = { warden: { warden: WARDEN, home } };
  if (BEFORE) {
    homes.before = { warden: BEFORE, home: path.join(dir, 'home-before') };
    add(BEFORE, homes.before.home, SERVER, servers[SERVER]);
  }
  const sides = sidesFor(servers[SERVER], SERVER, homes);
  delete sides.direct;
  // --store-forward: also bench/store-forward-relay.mjs (holds each server line until it is complete).
  if (process.argv.includes('--store-forward')) sides.storefwd = [process.execPath, [path.join(path.dirname(new URL(import.meta.url).pathname), 'store-forward-relay.mjs'), ...sides.raw[1].slice(1)]];
  // WARDEN_NODE_ARGS: node options for the warden side only (e.g. --cpu-prof, --log-deopt).
  if (process.env.WARDEN_NODE_ARGS) sides.warden[1] = [...process.env.WARDEN_NODE_ARGS.split(' '), ...sides.warden[1]];
  const sessions = {};
  for (const [n, s] of Object.entries(sides)) sessions[n] = await open(s);
  const server = Object.fromEntries(Object.entries(sessions).map(([n, s]) => [n, childrenOf(s.pid)[0]]));
  const echo = SERVER === 'bulk'
    ? async (s) => {
        const r = await s.request('tools/call', { name: 'bulk', arguments: { bytes: 1 << 20 } });
        if (!(r.bytes > 1 << 20)) throw new Error(JSON.stringify(r).slice(0, 300));
      }
    : async (s, i) => {
        const r = await s.request('tools/call', { name: 'echo', arguments: { message: `round ${i}` } });
        if (!r.result) throw new Error(JSON.stringify(r));
      };
  const BLOCK = SERVER === 'bulk' ? 8 : 100;
  const WARM = Number(arg('warmup', 300));
  for (const s of Object.values(sessions)) for (let i = 0; i < WARM; i++) await echo(s, i);
  if (process.argv.includes('--hold')) {
    console.log(JSON.stringify({ relay: Object.fromEntries(Object.entries(sessions).map(([n, s]) => [n, s.pid])), server }));
    await new Promise((r) => process.once('SIGUSR2', r));
  }
  process.stderr.write('=== measuring\n');
  const names = Object.keys(sessions);
  for (let r = 0; r < ROUNDS; r++) {
    const ms = Object.fromEntries(names.map((n) => [n, []]));
    const cpu = Object.fromEntries(names.map((n) => [n, { relay: 0, server: 0, calls: 0, vol: 0, invol: 0, sys: 0 }]));
    for (let b = 0; b < CALLS / BLOCK; b++) {
      for (const n of names) {
        const s = sessions[n];
        const c0 = cpuMs(s.pid), k0 = cpuMs(server[n]), x0 = ctx(s.pid), y0 = sysMs(s.pid);
        for (let i = 0; i < BLOCK; i++) {
          const t = process.hrtime.bigint();
          await echo(s, i);
          ms[n].push(Number(process.hrtime.bigint() - t) / 1e6);
        }
        cpu[n].relay += cpuMs(s.pid) - c0;
        cpu[n].server += cpuMs(server[n]) - k0;
        cpu[n].calls += BLOCK;
        const x1 = ctx(s.pid);
        cpu[n].sys += sysMs(s.pid) - y0;
        cpu[n].vol += x1[0] - x0[0];
        cpu[n].invol += x1[1] - x0[1];
      }
    }
    if (process.argv.includes('--slow')) for (const n of names) console.log(n, 'slow calls (index:ms):', ms[n].map((x, i) => [i, x]).filter(([, x]) => x > 1).map(([i, x]) => `${i}:${x.toFixed(1)}`).join(' '));
    for (const n of names) {
      const v = ms[n];
      const mean = v.reduce((a, x) => a + x, 0) / v.length;
      if (SERVER === 'bulk') console.log(`round ${r} ${n.padEnd(8)} ${((1 << 20) / 1e6 / (mean / 1000)).toFixed(0)} MB/s (mean ${mean.toFixed(2)} ms a call)`);
      console.log(`round ${r} ${n.padEnd(8)} p50 ${median(v).toFixed(3)} p90 ${quantile(v, 0.9).toFixed(3)} p99 ${quantile(v, 0.99).toFixed(3)} ms | relay CPU ${((cpu[n].relay / cpu[n].calls) * 1000).toFixed(1)} µs/call (sys ${((cpu[n].sys / cpu[n].calls) * 1000).toFixed(1)}), server CPU ${((cpu[n].server / cpu[n].calls) * 1000).toFixed(1)} µs/call | relay main thread switches/call: voluntary ${(cpu[n].vol / cpu[n].calls).toFixed(2)}, involuntary ${(cpu[n].invol / cpu[n].calls).toFixed(3)}`);
    }
  }
  await Promise.all(Object.values(sessions).map((s) => s.close()));
} finally {
  await stopAll();
  removeDir(dir);
}
