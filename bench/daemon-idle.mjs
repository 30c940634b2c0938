// Idle cost of the daemon with 20 supervised servers configured, side by side with an idle node process
// (the floor for anything written in node):   node bench/daemon-idle.mjs [--seconds N]
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WARDEN = path.join(ROOT, 'dist/cli/main.js');
const i = process.argv.indexOf('--seconds');
const SECONDS = i > 0 ? Number(process.argv[i + 1]) : 30;
const TICKS = 100; // USER_HZ
// Start-up digests thousands of files (in a worker thread); V8 then trims its heap for a while. Idle means after that.
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 30_000);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warden-idle-'));
const home = path.join(dir, 'home');
fs.mkdirSync(home, { mode: 0o700 });
// The three real servers from npm, in turn: every package tree is watched directory by directory.
const packages = ['everything', 'filesystem', 'memory'].map((n) => path.join(ROOT, 'node_modules/@modelcontextprotocol', `server-${n}`));
const servers = Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`server${k}`, { command: process.execPath, args: [path.join(packages[k % 3], 'dist/index.js'), ...(k % 3 === 1 ? [dir] : [])] }]));
fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify({ version: 1, servers }), { mode: 0o600 });
for (const p of [process.execPath, ...packages.flatMap((root) => [path.join(root, 'dist/index.js'), root])]) {
  const r = spawnSync(process.execPath, [WARDEN, '--home', home, 'allowlist', 'add', p], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`allowlist add ${p}: ${r.stderr}`);
}

function cpuTicks(pid) {
  const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

async function measure(child, ready) {
  await ready;
  await new Promise((r) => setTimeout(r, SETTLE_MS)); // let start-up work finish
  const t0 = cpuTicks(child.pid);
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const cpu = ((cpuTicks(child.pid) - t0) / TICKS / SECONDS) * 100;
  const rss = rssMb(child.pid);
  child.kill('SIGTERM');
  return { cpu, rss };
}

const daemon = spawn(process.execPath, [WARDEN, '--home', home, 'daemon', '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
let err = '';
const ready = new Promise((r) => daemon.stderr.on('data', (d) => ((err += d), /watching \d+ directories/.test(err) && r())));
const floor = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
const [d, f] = await Promise.all([measure(daemon, ready), measure(floor, Promise.resolve())]);
fs.rmSync(dir, { recursive: true, force: true });
console.log(err.split('\n').filter((l) => /watching \d+ directories/.test(l)).join('\n'));
console.log(`| idle over ${SECONDS} s | idle node process (floor) | mcp-warden daemon, 20 servers |`);
console.log('|---|---|---|');
console.log(`| CPU (% of one core) | ${f.cpu.toFixed(2)} | ${d.cpu.toFixed(2)} |`);
console.log(`| RSS (MB) | ${f.rss.toFixed(1)} | ${d.rss.toFixed(1)} |`);
