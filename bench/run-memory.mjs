// The relaying process's memory, side by side: raw relay and mcp-warden run (and --before, and variants of the
// warden with extra node options), each on server-everything, the echo calls in alternating blocks of 100 on
// live sessions (the interleaving of bench/run.mjs), repeated in rounds with fresh sessions. Per side: VmRSS,
// RssAnon, RssFile (/proc/PID/status) after the calls; with --snapshot, a heap snapshot of every relay
// afterwards (--heapsnapshot-signal), summarized side by side (bench/lib/heap-summary.mjs).
// With --latency N, N more calls after that, in the same blocks: round trips and the relay's CPU in steady state.
// With --pages, the pages of node's binary each relay has resident and the raw relay has not, after the calls
// of the first round: by ELF section and by what they hold (bench/lib/node-pages.mjs; needs root).
//   node bench/run-memory.mjs [--calls N] [--rounds R] [--latency N] [--before OTHER/dist/cli/main.js] [--snapshot] [--pages]
//                             [--variant 'NAME=--node-option ...'] ... [--node PATH]
// --node: the node the raw relay, the warden and the server run on (default: this one).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { summarize } from './lib/heap-summary.mjs';
import { accountPages, residentPages } from './lib/node-pages.mjs';
import { removeDir, stopAll, tempDir } from './lib/procs.mjs';
import { open } from './lib/session.mjs';
import { add, benchDir, nodeOptions, RELAY_NODE, sidesFor, WARDEN } from './lib/setup.mjs';
import { median, quantile } from './lib/stats.mjs';

const argv = process.argv.slice(2);
const arg = (n, d) => (argv.includes(`--${n}`) ? argv[argv.indexOf(`--${n}`) + 1] : d);
const CALLS = Number(arg('calls', 1000));
const ROUNDS = Number(arg('rounds', 3));
const BEFORE = arg('before') && path.resolve(arg('before'));
const SNAPSHOT = argv.includes('--snapshot');
const PAGES = argv.includes('--pages');
const LATENCY = Number(arg('latency', 0));
const VARIANTS = argv.flatMap((a, i) => (a === '--variant' ? [argv[i + 1]] : [])).map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1).split(' ').filter(Boolean)]);
const BLOCK = 100;

/** Resident KiB of the anonymous mappings by kind: V8 heap pages (256 KiB), the malloc heap, thread arenas and stacks, the rest. */
function smaps(pid) {
  const out = { v8pages: 0, mallocHeap: 0, bigAnon: 0, otherAnon: 0 };
  let kind;
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      const size = (parseInt(head[2], 16) - parseInt(head[1], 16)) / 1024;
      const name = head[3];
      kind = name === '[heap]' ? 'mallocHeap' : name ? undefined : size === 256 ? 'v8pages' : size >= 1024 ? 'bigAnon' : 'otherAnon';
    } else if (kind && line.startsWith('Rss:')) out[kind] += Number(/\d+/.exec(line)[0]) / 1024;
  }
  return out;
}

/** User + system CPU ms of a process (/proc/PID/stat, 10 ms ticks). */
function cpuMs(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(x[11]) + Number(x[12])) * 10;
}

function status(pid) {
  const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(st)?.[1] ?? NaN) / 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), hwm: kb('VmHWM'), ...smaps(pid) };
}

nodeOptions();
const { dir, servers } = benchDir('warden-mem-');
const snapDir = SNAPSHOT ? tempDir('warden-heap-') : undefined;
try {
  const home = path.join(dir, 'home');
  add(WARDEN, home, 'everything', servers.everything);
  const homes = { warden: { warden: WARDEN, home } };
  if (BEFORE) {
    homes.before = { warden: BEFORE, home: path.join(dir, 'home-before') };
    add(BEFORE, homes.before.home, 'everything', servers.everything);
  }
  const base = sidesFor(servers.everything, 'everything', homes);
  delete base.direct;
  // A variant's words NAME=VALUE are its environment (through env(1), which execs: the pid stays the relay's).
  for (const [name, words] of VARIANTS) {
    const env = words.filter((w) => /^[A-Z][A-Z0-9_]*=/.test(w));
    const flags = words.filter((w) => !/^[A-Z][A-Z0-9_]*=/.test(w));
    base[name] = env.length ? ['/usr/bin/env', [...env, RELAY_NODE, ...flags, ...base.warden[1]]] : [RELAY_NODE, [...flags, ...base.warden[1]]];
  }
  const snapFlags = SNAPSHOT ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapDir}`] : [];
  const names = Object.keys(base);
  const results = Object.fromEntries(names.map((n) => [n, []]));
  // Round trips and the relay's CPU over the same calls (every round; the first calls of a session included).
  const lat = Object.fromEntries(names.map((n) => [n, []]));
  const cpu = Object.fromEntries(names.map((n) => [n, 0]));
  const atStart = {};
  const late = Object.fromEntries(names.map((n) => [n, []]));
  const lateCpu = Object.fromEntries(names.map((n) => [n, 0]));
  const pages = {};
  console.error(`load average at start: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  for (let r = 0; r < ROUNDS; r++) {
    const order = names.map((_, k) => names[(k + r) % names.length]);
    const sessions = {};
    try {
      for (const n of order) sessions[n] = await open(base[n][0] === RELAY_NODE ? [base[n][0], [...snapFlags, ...base[n][1]]] : base[n]);
      for (const n of order) (atStart[n] ??= []).push(status(sessions[n].pid));
      for (let done = 0; done < CALLS; done += BLOCK) {
        for (const n of order) {
          const c0 = cpuMs(sessions[n].pid);
          for (let i = done; i < Math.min(done + BLOCK, CALLS); i++) {
            const t = process.hrtime.bigint();
            const res = await sessions[n].request('tools/call', { name: 'echo', arguments: { message: `call ${i}` } });
            if (!res.result) throw new Error(`${n}: ${JSON.stringify(res).slice(0, 300)}`);
            lat[n].push(Number(process.hrtime.bigint() - t) / 1e6);
          }
          cpu[n] += cpuMs(sessions[n].pid) - c0;
        }
      }
      for (const n of order) results[n].push(status(sessions[n].pid));
      if (PAGES && r === 0) for (const n of order) pages[n] = residentPages(sessions[n].pid, RELAY_NODE);
      // --latency N: N more calls after the memory is read, in the same blocks, counted on their own (steady state).
      for (let done = 0; done < LATENCY; done += BLOCK) {
        for (const n of order) {
          const c0 = cpuMs(sessions[n].pid);
          for (let i = 0; i < BLOCK; i++) {
            const t = process.hrtime.bigint();
            await sessions[n].request('tools/call', { name: 'echo', arguments: { message: `late ${i}` } });
            late[n].push(Number(process.hrtime.bigint() - t) / 1e6);
          }
          lateCpu[n] += cpuMs(sessions[n].pid) - c0;
        }
      }
      if (SNAPSHOT && r === 0) {
        for (const n of order) {
          const before = new Set(fs.readdirSync(snapDir));
          process.kill(sessions[n].pid, 'SIGUSR2');
          let file;
          for (let t = 0; t < 600 && !file; t++) {
            await new Promise((res) => setTimeout(res, 100));
            file = fs.readdirSync(snapDir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
            if (file) {
              // Written when its size stops changing.
              let size = -1;
              while (size !== fs.statSync(path.join(snapDir, file)).size) (size = fs.statSync(path.join(snapDir, file)).size), await new Promise((res) => setTimeout(res, 300));
            }
          }
          fs.renameSync(path.join(snapDir, file), path.join(snapDir, `${n}.heapsnapshot`));
          console.error(`${n}: VmRSS after its heap snapshot (full GCs) ${status(sessions[n].pid).rss.toFixed(1)} MB`);
        }
      }
    } finally {
      await Promise.all(Object.values(sessions).map((s) => s.close()));
    }
    console.error(`round ${r}: ${order.map((n) => `${n} ${results[n].at(-1).rss.toFixed(1)} MB`).join(', ')} (load ${os.loadavg()[0].toFixed(2)})`);
  }
  console.log(`| after ${CALLS} calls, median of ${ROUNDS} rounds (MB) | ${names.join(' | ')} |`);
  console.log(`|---|${names.map(() => '---').join('|')}|`);
  for (const k of ['rss', 'v8pages', 'bigAnon']) console.log(`| at session start: ${k} | ${names.map((n) => median(atStart[n].map((x) => x[k])).toFixed(1)).join(' | ')} |`);
  for (const k of ['rss', 'anon', 'file', 'hwm', 'v8pages', 'mallocHeap', 'bigAnon', 'otherAnon']) console.log(`| ${k} | ${names.map((n) => median(results[n].map((x) => x[k])).toFixed(1)).join(' | ')} |`);
  const q = (n, p) => quantile(lat[n], p).toFixed(3);
  console.log(`| round trip p50 / p99 ms, all calls | ${names.map((n) => `${q(n, 0.5)} / ${q(n, 0.99)}`).join(' | ')} |`);
  console.log(`| relay CPU µs a call | ${names.map((n) => ((cpu[n] / lat[n].length) * 1000).toFixed(0)).join(' | ')} |`);
  if (LATENCY) {
    const d = (n, p) => `${quantile(late[n], p).toFixed(3)} (${n === 'raw' ? '' : `${quantile(late[n], p) - quantile(late.raw, p) >= 0 ? '+' : ''}${(quantile(late[n], p) - quantile(late.raw, p)).toFixed(3)}`})`;
    console.log(`| after: round trip p50 (Δ raw) ms | ${names.map((n) => d(n, 0.5)).join(' | ')} |`);
    console.log(`| after: round trip p99 (Δ raw) ms | ${names.map((n) => d(n, 0.99)).join(' | ')} |`);
    console.log(`| after: relay CPU µs a call | ${names.map((n) => ((lateCpu[n] / late[n].length) * 1000).toFixed(0)).join(' | ')} |`);
  }
  console.log(`| rss − raw relay, each round | ${names.map((n) => results[n].map((x, i) => (x.rss - results.raw[i].rss).toFixed(1)).join(' / ')).join(' | ')} |`);
  if (PAGES) {
    for (const n of names.filter((x) => x !== 'raw')) {
      const a = accountPages(RELAY_NODE, pages[n], pages.raw);
      const mb = (rows) => rows.map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');
      console.log(`\n${n}: ${a.total.toFixed(1)} MB of node's binary resident that the raw relay has not (round 0)`);
      console.log(`  by section: ${mb(a.bySection)}`);
      console.log(`  by what it holds: ${mb(a.byGroup.slice(0, 12))}`);
    }
  }
  if (SNAPSHOT) {
    const sums = Object.fromEntries(names.map((n) => [n, summarize(path.join(snapDir, `${n}.heapsnapshot`))]));
    const kb = (x) => (x / 1024).toFixed(0);
    const table = (title, key) => {
      const keys = [...new Set(names.flatMap((n) => sums[n][key].map(([k]) => k)))];
      const get = (n, k) => sums[n][key].find(([kk]) => kk === k)?.[1] ?? 0;
      keys.sort((a, b) => get(names.at(-1) === 'raw' ? names[0] : 'warden', b) - get('warden', a));
      console.log(`\n| ${title} (KiB) | ${names.join(' | ')} |\n|---|${names.map(() => '---').join('|')}|`);
      for (const k of keys) console.log(`| ${k.replace(/\|/g, '\\|')} | ${names.map((n) => kb(get(n, k))).join(' | ')} |`);
    };
    console.log(`\nheap snapshot total (KiB): ${names.map((n) => `${n} ${kb(sums[n].total)}`).join(', ')}`);
    table('by node type', 'byType');
    table('by type:name', 'byName');
    table('code by script', 'codeByScript');
    table('source text by script', 'sourceByScript');
  }
} finally {
  await stopAll();
  removeDir(dir);
  if (snapDir) removeDir(snapDir);
}
