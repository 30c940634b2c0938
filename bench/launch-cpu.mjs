// CPU time (user + sys, every thread: node's loader-hooks thread of a guarded server included) that a launch
// costs, from spawn to the initialize result: the relaying process (raw relay or mcp-warden run) plus the
// server under it, read from /proc/PID/stat when the result arrives. Then 10 at once: wall time until all
// are initialized and the CPU all of them used, so that the wall ratio can be read against the CPU ratio.
//   node bench/launch-cpu.mjs [--launches N] [--rounds N] [--count 10] [--servers basic,everything] [--node PATH]
import fs from 'node:fs';
import path from 'node:path';
import { add, benchDir, nodeOptions, sidesFor, WARDEN } from './lib/setup.mjs';
import { initialize, session } from './lib/session.mjs';
import { removeDir, stopAll } from './lib/procs.mjs';
import { median } from './lib/stats.mjs';

const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const LAUNCHES = Number(arg('launches', 8));
const ROUNDS = Number(arg('rounds', 3));
const COUNT = Number(arg('count', 10));
const SERVERS = arg('servers', 'basic,everything').split(',');
const TICK_MS = 10; // USER_HZ 100

function stat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) * TICK_MS };
  } catch {
    return undefined;
  }
}
const children = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
};
/** CPU ms of `pid` (all its threads) and, separately, of its descendants. */
function cpuOf(pid) {
  const own = stat(pid)?.cpu ?? NaN;
  let below = 0;
  const queue = children(pid);
  while (queue.length) {
    const p = queue.pop();
    below += stat(p)?.cpu ?? 0;
    queue.push(...children(p));
  }
  return { relay: own, server: below };
}

async function once([cmd, args]) {
  const s = session(cmd, args);
  try {
    const ms = await initialize(s);
    return { ms, ...cpuOf(s.pid) };
  } finally {
    await s.close();
  }
}

async function atOnce([cmd, args], count) {
  const t0 = process.hrtime.bigint();
  const ss = Array.from({ length: count }, () => session(cmd, args));
  const cpus = await Promise.all(ss.map(async (s) => (await initialize(s), cpuOf(s.pid))));
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  await Promise.all(ss.map((s) => s.close()));
  return { ms, cpu: cpus.reduce((a, c) => a + c.relay + c.server, 0) };
}

nodeOptions();
const { dir, servers } = benchDir('warden-launchcpu-');
try {
  const home = path.join(dir, 'home');
  for (const id of SERVERS) add(WARDEN, home, id, servers[id]);
  for (const id of SERVERS) {
    const sides = sidesFor(servers[id], id, { warden: { warden: WARDEN, home } });
    delete sides.direct;
    const names = Object.keys(sides);
    for (const n of names) await once(sides[n]); // warm-up
    const one = Object.fromEntries(names.map((n) => [n, []]));
    for (let i = 0; i < LAUNCHES; i++) for (const n of i % 2 ? names : [...names].reverse()) one[n].push(await once(sides[n]));
    const many = Object.fromEntries(names.map((n) => [n, []]));
    for (const n of names) await atOnce(sides[n], COUNT); // warm-up
    for (let i = 0; i < ROUNDS; i++) for (const n of i % 2 ? names : [...names].reverse()) many[n].push(await atOnce(sides[n], COUNT));
    const m = (xs, k) => median(xs.map((x) => x[k]));
    console.log(`\n${id}: one launch at a time (${LAUNCHES} per side), medians`);
    for (const n of names) console.log(`  ${n.padEnd(7)} spawn→initialize ${m(one[n], 'ms').toFixed(0)} ms | CPU: relay ${m(one[n], 'relay').toFixed(0)} ms + server ${m(one[n], 'server').toFixed(0)} ms = ${median(one[n].map((x) => x.relay + x.server)).toFixed(0)} ms`);
    const cpuRatio = median(one.warden.map((x) => x.relay + x.server)) / median(one.raw.map((x) => x.relay + x.server));
    console.log(`${id}: ${COUNT} at once (${ROUNDS} rounds per side), medians`);
    for (const n of names) console.log(`  ${n.padEnd(7)} all initialized ${m(many[n], 'ms').toFixed(0)} ms | CPU of all ${COUNT} sessions ${m(many[n], 'cpu').toFixed(0)} ms (${(m(many[n], 'cpu') / m(many[n], 'ms')).toFixed(2)} cores busy)`);
    console.log(`  ratio warden/raw: wall ${(m(many.warden, 'ms') / m(many.raw, 'ms')).toFixed(2)}×, CPU at once ${(m(many.warden, 'cpu') / m(many.raw, 'cpu')).toFixed(2)}×, CPU per single launch ${cpuRatio.toFixed(2)}×`);
  }
} finally {
  await stopAll();
  removeDir(dir);
}
