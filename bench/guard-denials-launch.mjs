// What the module guard's reports of denied writes cost a confined launch of a warden that is not root
// (docs/adr/0068-denied-writes-reported-by-the-guard.md): the same node server confined (network none) in two homes
// given to uid 65534, one as it comes (not root: no bpftrace, the guard reports) and one with "writeTracing": "off"
// (nothing observes the writes: the guard wraps nothing, the warden reads nothing). `mcp-warden run` is started as
// uid 65534 (setpriv). Interleaved rounds: wall ms from spawn to the initialize result, and the CPU of the whole
// session (the warden and every child it reaped: bwrap, the server), from spawn to exit, after `--hold` ms idle
// (the warden reads the report once a second while the session runs).
//   node bench/guard-denials-launch.mjs [--launches N] [--server basic|everything] [--hold MS]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { add, benchDir, nodeOptions, RELAY_NODE, WARDEN } from './lib/setup.mjs';
import { initialize, session } from './lib/session.mjs';
import { fmt, quantile, rotate } from './lib/stats.mjs';

const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const LAUNCHES = Number(arg('launches', 15));
const ID = arg('server', 'basic');
const HOLD = Number(arg('hold', 0));
nodeOptions();
if (process.getuid() !== 0) throw new Error('run as root: the warden is started as uid 65534 from here');

const { dir, servers } = benchDir('warden-bench-guard-denials-');
fs.chmodSync(dir, 0o711);
const homes = { guard: path.join(dir, 'home-guard'), off: path.join(dir, 'home-off') };
for (const [side, home] of Object.entries(homes)) {
  add(WARDEN, home, ID, servers[ID]);
  const r = spawnSync(RELAY_NODE, [WARDEN, '--home', home, 'sandbox', ID, '--network', 'none', '--yes'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sandbox ${ID}: ${r.stderr}`);
  if (side === 'off') {
    const file = path.join(home, 'servers.json');
    fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), writeTracing: 'off' }, null, 2), { mode: 0o600 });
  }
  spawnSync('chown', ['-R', '65534:65534', home]);
}
const user = path.join(dir, 'user');
fs.mkdirSync(user);
spawnSync('chown', ['65534:65534', user]);
process.env.HOME = user;

// The session's CPU: `mcp-warden run` under /usr/bin/time (user + sys of it and every child it waited for).
async function once(home) {
  const out = path.join(dir, 'time.txt');
  const s = session('/usr/bin/time', ['-o', out, '-f', '%U %S', '/usr/bin/setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups', RELAY_NODE, WARDEN, '--home', home, 'run', ID]);
  let ms;
  try {
    ms = await initialize(s);
    if (HOLD > 0) await new Promise((r) => setTimeout(r, HOLD));
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
const audit = fs.readFileSync(path.join(homes.guard, 'audit.log'), 'utf8');
if (!audit.includes('"writes":"guard"')) throw new Error('the guard side never had its writes reported by the guard');
console.log(`${ID} confined (network none), warden as uid 65534: spawn → initialize result (ms) and CPU of the whole session (ms)${HOLD ? `, held ${HOLD} ms` : ''}, ${LAUNCHES} launches a side, interleaved, 2 warm-up`);
console.log('| side | wall p25 | wall p50 | wall min | CPU p25 | CPU p50 | CPU min |\n|---|---|---|---|---|---|---|');
for (const n of names) {
  const ms = runs[n].map((x) => x.ms);
  const cpu = runs[n].map((x) => x.cpu);
  console.log(`| writes ${n} | ${fmt(quantile(ms, 0.25))} | ${fmt(quantile(ms, 0.5))} | ${fmt(Math.min(...ms))} | ${fmt(quantile(cpu, 0.25))} | ${fmt(quantile(cpu, 0.5))} | ${fmt(Math.min(...cpu))} |`);
}
fs.rmSync(dir, { recursive: true, force: true });
