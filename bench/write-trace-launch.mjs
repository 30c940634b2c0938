// What observing denied writes costs a root warden's confined launch (docs/adr/0066-denied-writes-through-bpftrace.md):
// the same server confined (network none) in two homes, one whose trusted path has bpftrace (the session's tracer
// attaches before the server is spawned) and one whose trusted path holds only links to bwrap and nsenter (writes
// not observed). Interleaved rounds: wall ms from spawning `mcp-warden run` to the initialize result, and the CPU of
// the whole session (the warden and every child it reaped: bwrap, the server, bpftrace), from spawn to exit.
//   node bench/write-trace-launch.mjs [--launches N] [--server basic|everything]
import fs from 'node:fs';
import path from 'node:path';
import { add, benchDir, nodeOptions, RELAY_NODE, WARDEN } from './lib/setup.mjs';
import { initialize, session } from './lib/session.mjs';
import { fmt, quantile, rotate } from './lib/stats.mjs';
import { spawnSync } from 'node:child_process';

const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const LAUNCHES = Number(arg('launches', 15));
const ID = arg('server', 'basic');
nodeOptions();
if (process.getuid() !== 0) throw new Error('run as root: only a root warden traces');

const { dir, servers } = benchDir('warden-bench-writes-');
const bin = path.join(dir, 'bin');
fs.mkdirSync(bin, { mode: 0o755 });
for (const t of ['bwrap', 'nsenter']) fs.symlinkSync(`/usr/bin/${t}`, path.join(bin, t));
const homes = { observed: path.join(dir, 'home-observed'), unobserved: path.join(dir, 'home-unobserved') };
for (const [side, home] of Object.entries(homes)) {
  add(WARDEN, home, ID, servers[ID]);
  const file = path.join(home, 'servers.json');
  if (side === 'unobserved') {
    const config = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.writeFileSync(file, JSON.stringify({ ...config, path: bin }, null, 2), { mode: 0o600 });
  }
  const r = spawnSync(RELAY_NODE, [WARDEN, '--home', home, 'sandbox', ID, '--network', 'none', '--yes'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sandbox ${ID}: ${r.stderr}`);
}

// The session's CPU: `mcp-warden run` under /usr/bin/time (user + sys of it and every child it waited for).
async function once(home) {
  const out = path.join(dir, 'time.txt');
  const s = session('/usr/bin/time', ['-o', out, '-f', '%U %S', RELAY_NODE, WARDEN, '--home', home, 'run', ID]);
  let ms;
  try {
    ms = await initialize(s);
  } finally {
    await s.close();
  }
  const [u, sy] = fs.readFileSync(out, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
  return { ms, cpu: (u + sy) * 1000 };
}

const names = Object.keys(homes);
for (let i = 0; i < 2; i++) for (const n of rotate(names, i)) await once(homes[n]);
const runs = Object.fromEntries(names.map((n) => [n, []]));
for (let i = 0; i < LAUNCHES; i++) for (const n of rotate(names, i)) runs[n].push(await once(homes[n]));
const audit = fs.readFileSync(path.join(homes.observed, 'audit.log'), 'utf8');
if (!audit.includes('"writes":"observed"')) throw new Error('the observed side never observed writes: is bpftrace at /usr/bin and tracefs mounted?');
console.log(`${ID} confined (network none), root: spawn → initialize result (ms) and CPU of the whole session (ms), ${LAUNCHES} launches a side, interleaved, 2 warm-up`);
console.log('| side | wall p25 | wall p50 | wall min | CPU p25 | CPU p50 | CPU min |\n|---|---|---|---|---|---|---|');
for (const n of names) {
  const ms = runs[n].map((x) => x.ms);
  const cpu = runs[n].map((x) => x.cpu);
  console.log(`| writes ${n} | ${fmt(quantile(ms, 0.25))} | ${fmt(quantile(ms, 0.5))} | ${fmt(Math.min(...ms))} | ${fmt(quantile(cpu, 0.25))} | ${fmt(quantile(cpu, 0.5))} | ${fmt(Math.min(...cpu))} |`);
}
fs.rmSync(dir, { recursive: true, force: true });
