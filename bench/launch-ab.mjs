// Launches of one server, interleaved: the raw relay, this build's `mcp-warden run` and, with --before, another
// build's, many rounds, so that a change of ~10-20 ms can be read through this machine's noise (bench/run.mjs
// launches every server it measures the same number of times, which is slow for many rounds).
// With --crowded, a second home of this build has server-everything, -filesystem and -memory enrolled beside
// the server: what the rest of a home costs the launch of one server.
//   node bench/launch-ab.mjs [--server basic|everything] [--launches N] [--before OTHER/dist/cli/main.js ...] [--crowded]
//                             [--node PATH] [--server-node PATH]
// --node: the node the raw relay, the warden and the servers run on (default: this one); --server-node: the servers only.
import path from 'node:path';
import { add, benchDir, nodeOptions, RELAY_NODE, ROOT, sidesFor, WARDEN } from './lib/setup.mjs';
import { cpuOfTree } from './lib/cpu.mjs';
import { initialize, session } from './lib/session.mjs';
import { fmt, quantile, rotate, signed } from './lib/stats.mjs';

const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const ID = arg('server', 'basic');
const LAUNCHES = Number(arg('launches', 40));
// --before may be given more than once: sides before, before2, before3...
const BEFORES = process.argv.flatMap((a, i) => (a === '--before' ? [path.resolve(process.argv[i + 1])] : []));
const CROWDED = process.argv.includes('--crowded');
nodeOptions();

const { dir, servers } = benchDir();
const homes = { warden: { warden: WARDEN, home: path.join(dir, 'home') } };
BEFORES.forEach((warden, k) => (homes[`before${k ? k + 1 : ''}`] = { warden, home: path.join(dir, `home-before${k + 1}`) }));
if (CROWDED) homes.crowded = { warden: WARDEN, home: path.join(dir, 'home-crowded') };
for (const h of Object.values(homes)) add(h.warden, h.home, ID, servers[ID]);
if (CROWDED) {
  const pkg = (name) => path.join(ROOT, `node_modules/@modelcontextprotocol/server-${name}/dist/index.js`);
  for (const [id, argv] of [['everything', servers.everything], ['filesystem', [pkg('filesystem'), dir]], ['memory', [pkg('memory')]]]) {
    if (id !== ID) add(WARDEN, homes.crowded.home, id, argv);
  }
}
const sides = sidesFor(servers[ID], ID, homes);
delete sides.direct;
// Each launch: wall ms to the initialize result, and the CPU the relay and the server under it had used by then.
async function once([cmd, args]) {
  const s = session(cmd, args);
  try {
    const ms = await initialize(s);
    return { ms, ...cpuOfTree(s.pid) };
  } finally {
    await s.close();
  }
}
const names = Object.keys(sides);
for (let i = 0; i < 3; i++) for (const n of rotate(names, i)) await once(sides[n]);
const runs = Object.fromEntries(names.map((n) => [n, []]));
for (let i = 0; i < LAUNCHES; i++) for (const n of rotate(names, i)) runs[n].push(await once(sides[n]));
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const r = Object.fromEntries(names.map((n) => {
  const ms = runs[n].map((x) => x.ms);
  return [n, { samples: ms, p50: quantile(ms, 0.5), min: Math.min(...ms), relayCpu: mean(runs[n].map((x) => x.relay)), serverCpu: mean(runs[n].map((x) => x.server)) }];
}));
console.log(`${ID}: spawn → initialize result (ms), ${LAUNCHES} launches a side, interleaved, 3 warm-up, relays on ${RELAY_NODE}`);
console.log('CPU: mean ms (10 ms ticks, /proc) the relaying process and the server had used at the initialize result.');
console.log('| side | p25 | p50 | min | p50 − warden | CPU relay | CPU server | CPU both − warden |');
console.log('|---|---|---|---|---|---|---|---|');
for (const [side, s] of Object.entries(r)) {
  const both = (x) => x.relayCpu + x.serverCpu;
  console.log(`| ${side} | ${fmt(quantile(s.samples, 0.25))} | ${fmt(s.p50)} | ${fmt(s.min)} | ${side === 'warden' ? '' : signed(s.p50 - r.warden.p50)} | ${fmt(s.relayCpu)} | ${fmt(s.serverCpu)} | ${side === 'warden' ? '' : signed(both(s) - both(r.warden))} |`);
}
