// What a session's tracer of denied writes costs the rest of the host (docs/adr/0066-denied-writes-through-bpftrace.md):
// its two programs on raw_syscalls run at every system call of the host. 0, 1 and 3 tracers attached for an empty
// cgroup (no process of the host is in it), each round the same `dd bs=1 count=N` (2 N system calls) outside it;
// the sys time of dd, interleaved. --before FILE: also the same with the program text in FILE (an earlier build's
// TRACE_PROGRAM), in the same rounds. "1 × empty": the two tracepoints with programs that do nothing (the floor: what
// enabling raw_syscalls costs by itself, whatever the program).
//   node bench/write-trace-host-cost.mjs [--rounds 5] [--count 1000000] [--before FILE]
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { TRACE_PROGRAM } from '../dist/sandbox/write-trace.js';
import { fmt, median, rotate } from './lib/stats.mjs';

const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const ROUNDS = Number(arg('rounds', 5));
const COUNT = Number(arg('count', 1_000_000));
const before = arg('before');
if (process.getuid() !== 0) throw new Error('run as root');
const root = ['/sys/fs/cgroup/unified', '/sys/fs/cgroup'].find((d) => fs.existsSync(`${d}/cgroup.procs`));
const cg = fs.mkdtempSync(`${root}/warden-bench-`);
const id = fs.statSync(cg, { bigint: true }).ino.toString();

function tracer(program) {
  const child = spawn('bpftrace', ['-B', 'line', '-e', program, id], { stdio: ['ignore', 'pipe', 'ignore'], env: { BPFTRACE_STRLEN: '64' } });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('READY\n')) resolve(child);
    });
    child.once('exit', (c) => reject(new Error(`bpftrace exited ${c}`)));
  });
}
async function once(program, n) {
  const ts = [];
  for (let i = 0; i < n; i++) ts.push(await tracer(program));
  const r = spawnSync('/usr/bin/time', ['-f', '%S', 'dd', 'if=/dev/zero', 'of=/dev/null', 'bs=1', `count=${COUNT}`], { encoding: 'utf8' });
  for (const t of ts) {
    const gone = new Promise((r) => t.once('exit', r));
    t.kill('SIGINT');
    await gone;
  }
  return Number(r.stderr.trim().split('\n').at(-1));
}

const EMPTY = 'BEGIN { printf("READY\\n"); } tracepoint:raw_syscalls:sys_enter /cgroup == $1/ { } tracepoint:raw_syscalls:sys_exit /cgroup == $1/ { }';
const sides = [['none', '', 0], ['1 × empty', EMPTY, 1]];
for (const n of [1, 3]) {
  sides.push([`${n} × this build`, TRACE_PROGRAM, n]);
  if (before) sides.push([`${n} × before`, fs.readFileSync(before, 'utf8'), n]);
}
const runs = Object.fromEntries(sides.map(([s]) => [s, []]));
try {
  for (let i = 0; i < ROUNDS; i++) for (const [s, p, n] of rotate(sides, i)) runs[s].push(await once(p, n));
} finally {
  fs.rmdirSync(cg);
}
const base = median(runs.none);
console.log(`dd bs=1 count=${COUNT} (${2 * COUNT} system calls) outside the traced cgroup: sys s, ${ROUNDS} rounds interleaved`);
console.log('| tracers | sys p50 | sys min | sys max | µs a call over none (p50) |\n|---|---|---|---|---|');
for (const [s] of sides) {
  const xs = runs[s];
  console.log(`| ${s} | ${fmt(median(xs), 2)} | ${fmt(Math.min(...xs), 2)} | ${fmt(Math.max(...xs), 2)} | ${fmt(((median(xs) - base) * 1e6) / (2 * COUNT), 3)} |`);
}
