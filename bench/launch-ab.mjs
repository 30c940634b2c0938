// Launches of one server, interleaved: the raw relay, this build's `mcp-warden run` and, with --before, another
// build's, many rounds, so that a change of ~10-20 ms can be read through this machine's noise (bench/run.mjs
// launches every server it measures the same number of times, which is slow for many rounds).
// With --crowded, a second home of this build has server-everything, -filesystem and -memory enrolled beside
// the server: what the rest of a home costs the launch of one server.
//   node bench/launch-ab.mjs [--server basic|everything] [--launches N] [--before OTHER/dist/cli/main.js] [--crowded]
//                             [--node PATH] [--server-node PATH]
// --node: the node the raw relay, the warden and the servers run on (default: this one); --server-node: the servers only.
import path from 'node:path';
import { add, benchDir, nodeOptions, RELAY_NODE, ROOT, sidesFor, WARDEN } from './lib/setup.mjs';
import { launchTimes } from './lib/launch.mjs';
import { fmt, quantile, signed } from './lib/stats.mjs';

const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const ID = arg('server', 'basic');
const LAUNCHES = Number(arg('launches', 40));
const BEFORE = arg('before', undefined) && path.resolve(arg('before'));
const CROWDED = process.argv.includes('--crowded');
nodeOptions();

const { dir, servers } = benchDir();
const homes = { warden: { warden: WARDEN, home: path.join(dir, 'home') } };
if (BEFORE) homes.before = { warden: BEFORE, home: path.join(dir, 'home-before') };
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
const r = await launchTimes(sides, { launches: LAUNCHES, warmup: 3 });
console.log(`${ID}: spawn → initialize result (ms), ${LAUNCHES} launches a side, interleaved, 3 warm-up, relays on ${RELAY_NODE}`);
console.log('| side | p25 | p50 | min | p50 − warden |');
console.log('|---|---|---|---|---|');
for (const [side, s] of Object.entries(r)) {
  console.log(`| ${side} | ${fmt(quantile(s.samples, 0.25))} | ${fmt(s.p50)} | ${fmt(s.min)} | ${side === 'warden' ? '' : signed(s.p50 - r.warden.p50)} |`);
}
