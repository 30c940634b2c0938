// What a sandbox costs a launch (docs/adr/0050-sandbox-engine.md): a one-file server that writes a line as soon
// as it runs, started directly, under bubblewrap with the arguments the warden gives it (dist/sandbox/plan.js),
// and, with --srt, under @anthropic-ai/sandbox-runtime's CLI (run by a node >= 22.12; it needs bwrap, socat and
// rg). Spawn → first line, interleaved rounds, on node 20 (this one) and node 24 (test/nodes). Then the whole
// `mcp-warden run` of a server, unconfined, confined (network none) and confined with network domains (its
// proxy's listener started in the sandbox's namespace: docs/adr/0060-egress-proxy.md): spawn → initialize result.
//   node bench/sandbox-launch.mjs [--launches N] [--srt PATH/TO/sandbox-runtime/dist/cli.js] [--warden-only]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bwrapArgs } from '../dist/sandbox/plan.js';
import { add, benchDir, ROOT, WARDEN } from './lib/setup.mjs';
import { launchTimes } from './lib/launch.mjs';
import { fmt, quantile, rotate } from './lib/stats.mjs';

const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const LAUNCHES = Number(arg('launches', 30));
const SRT = arg('srt', undefined);
const NODE24 = path.join(ROOT, 'test/nodes/node_modules/node24/bin/node');

const dir = fs.mkdtempSync('/var/tmp/warden-bench-sandbox-');
const script = path.join(dir, 'one.mjs');
fs.writeFileSync(script, 'process.stdout.write("ready\\n");\n');
const data = path.join(dir, 'data');
fs.mkdirSync(data);
const confined = (node) => bwrapArgs({ network: 'none', write: [], read: { allow: [], deny: [] } }, { id: 'bench', userHome: os.homedir(), wardenHome: path.join(dir, 'home'), dataDir: data, ownFiles: [script, node], cwd: undefined });
const srtSettings = path.join(dir, 'srt.json');
fs.writeFileSync(srtSettings, JSON.stringify({ network: { allowedDomains: [], deniedDomains: [] }, filesystem: { denyRead: [os.homedir()], allowWrite: [data], denyWrite: [] } }));

function firstLine(cmd, args) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.stdout.once('data', () => resolve(Number(process.hrtime.bigint() - t0) / 1e6));
    child.once('exit', (code) => code !== 0 && reject(new Error(`${cmd} exited ${code}: ${err}`)));
  });
}

const sides = {};
for (const [label, node] of [[`node ${process.versions.node}`, process.execPath], ['node 24', NODE24]]) {
  sides[`${label} direct`] = () => firstLine(node, [script]);
  sides[`${label} bwrap`] = () => firstLine('/usr/bin/bwrap', [...confined(node), '--', node, script]);
  if (SRT) sides[`${label} srt`] = () => firstLine(NODE24, [SRT, '-s', srtSettings, node, script]);
}
const samples = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
for (let i = 0; i < (process.argv.includes('--warden-only') ? 0 : LAUNCHES + 3); i++) {
  for (const k of rotate(Object.keys(sides), i)) {
    const ms = await sides[k]();
    if (i >= 3) samples[k].push(ms);
  }
}
if (!process.argv.includes('--warden-only')) console.log(`one-file server: spawn → first line (ms), ${LAUNCHES} launches a side, interleaved, 3 warm-up`);
if (!process.argv.includes('--warden-only')) console.log('| side | p25 | p50 | p90 | min |\n|---|---|---|---|---|');
if (!process.argv.includes('--warden-only')) for (const [k, s] of Object.entries(samples)) console.log(`| ${k} | ${fmt(quantile(s, 0.25))} | ${fmt(quantile(s, 0.5))} | ${fmt(quantile(s, 0.9))} | ${fmt(Math.min(...s))} |`);

// The whole launch through the warden: the same server enrolled twice, the second confined.
const { dir: bdir, servers } = benchDir();
const home = path.join(bdir, 'home');
add(WARDEN, home, 'basic', servers.basic);
add(WARDEN, home, 'confined', servers.basic);
add(WARDEN, home, 'domains', servers.basic);
for (const [id, flags] of [['confined', ['--network', 'none']], ['domains', ['--allow-domain', 'api.example.com']]]) {
  const set = spawn(process.execPath, [WARDEN, '--home', home, 'sandbox', id, ...flags], { stdio: 'ignore' });
  await new Promise((r) => set.once('exit', r));
}
const r = await launchTimes(
  { unconfined: [process.execPath, [WARDEN, '--home', home, 'run', 'basic']], confined: [process.execPath, [WARDEN, '--home', home, 'run', 'confined']], domains: [process.execPath, [WARDEN, '--home', home, 'run', 'domains']] },
  { launches: LAUNCHES, warmup: 3 },
);
console.log(`\nmcp-warden run, test server 'basic': spawn → initialize result (ms), ${LAUNCHES} launches a side`);
console.log('| side | p25 | p50 | min |');
console.log('|---|---|---|---|');
for (const [k, s] of Object.entries(r)) console.log(`| ${k} | ${fmt(quantile(s.samples, 0.25))} | ${fmt(s.p50)} | ${fmt(s.min)} |`);
fs.rmSync(dir, { recursive: true, force: true });
fs.rmSync(bdir, { recursive: true, force: true });
