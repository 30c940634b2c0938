// What read.deny's hiding costs a launch (docs/adr/0050-sandbox-engine.md, addendum "read.deny without a race"):
// a one-file server that writes a line as soon as it runs, under bubblewrap with the warden's arguments
// (dist/sandbox/plan.js), its read grant holding a denied file beside N other entries, each bound back at every
// launch. Spawn → first line, interleaved rounds, and the CPU bwrap spends (user + sys, a launch). The grants lie under /tmp, which the sandbox hides as it hides
// the home: only the grant is rebuilt.
//   node bench/deny-launch.mjs [--launches N]
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bwrapArgs } from '../dist/sandbox/plan.js';
import { fmt, quantile, rotate } from './lib/stats.mjs';

const i = process.argv.indexOf('--launches');
const LAUNCHES = i > 0 ? Number(process.argv[i + 1]) : 20;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warden-bench-deny-')) // under /tmp, a tmpfs of the sandbox's own, as a grant under the home;
const script = path.join(dir, 'one.mjs');
fs.writeFileSync(script, 'process.stdout.write("ready\\n");\n');
const data = path.join(dir, 'data');
fs.mkdirSync(data);

function grantWith(n) {
  const g = path.join(dir, `grant${n}`);
  fs.mkdirSync(g);
  fs.writeFileSync(path.join(g, '.env'), 'TOKEN=x\n');
  for (let k = 0; k < n; k++) fs.writeFileSync(path.join(g, `f${k}`), '');
  return g;
}

function mounts(n) {
  const g = n < 0 ? undefined : grantWith(n);
  const c = { network: 'none', write: [], read: { allow: g ? [g] : [], deny: g ? [path.join(g, '.env')] : [] } };
  const scope = { id: 'bench', trustedPath: '/usr/bin:/bin', alerts: [], wardenHome: path.join(dir, 'home'), sandboxes: { bench: c } };
  return bwrapArgs(c, { id: 'bench', userHome: os.homedir(), wardenHome: path.join(dir, 'home'), dataDir: data, ownFiles: [script, process.execPath], wardenFiles: [], cwd: undefined, scope });
}

const firstLine = (m) => new Promise((resolve, reject) => {
  const t0 = process.hrtime.bigint();
  const child = spawn('/usr/bin/bwrap', [...m.args(3), '--', process.execPath, script], { stdio: ['ignore', 'pipe', 'pipe', ...m.fds] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  child.stdout.once('data', () => resolve(Number(process.hrtime.bigint() - t0) / 1e6));
  child.once('exit', (code) => code !== 0 && reject(new Error(`bwrap exited ${code}: ${err}`)));
});

const sides = { 'no deny': mounts(-1), ...Object.fromEntries([0, 8, 32, 128].map((n) => [`deny beside ${n} entries`, mounts(n)])) };
const samples = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
for (let r = 0; r < LAUNCHES + 3; r++) for (const k of rotate(Object.keys(sides), r)) {
  const ms = await firstLine(sides[k]);
  if (r >= 3) samples[k].push(ms);
}
// CPU: bwrap alone (the server replaced by /bin/true), 20 launches, user + sys of the reaped children from
// /proc/self/stat (cutime, cstime: clock ticks), a launch. Without --unshare-pid: with it bwrap does its mounts in
// the namespace's init, which it never reaps, and the time would not be counted (the mounts cost the same).
const ticks = () => fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ').slice(13, 15).reduce((a, b) => a + Number(b), 0);
const cpu = (m) => {
  const args = m.args(3).filter((a) => a !== '--unshare-pid');
  const t0 = ticks();
  for (let k = 0; k < 20; k++) {
    const r = spawnSync('/usr/bin/bwrap', [...args, '--', '/bin/true'], { stdio: ['ignore', 'ignore', 'pipe', ...m.fds] });
    if (r.status !== 0) throw new Error(`bwrap exited ${r.status}: ${r.stderr}`);
  }
  return ((ticks() - t0) * 10) / 20; // 100 ticks a second
};
console.log(`bwrap → first line of a one-file server (ms), ${LAUNCHES} launches a side, interleaved, 3 warm-up; CPU of bwrap alone, 20 launches`);
console.log('| side | p25 | p50 | p90 | min | bwrap CPU ms |\n|---|---|---|---|---|---|');
for (const [k, s] of Object.entries(samples)) console.log(`| ${k} | ${fmt(quantile(s, 0.25))} | ${fmt(quantile(s, 0.5))} | ${fmt(quantile(s, 0.9))} | ${fmt(Math.min(...s))} | ${fmt(cpu(sides[k]))} |`);
for (const m of Object.values(sides)) m.close();
fs.rmSync(dir, { recursive: true, force: true });
