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

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warden-idle-'));
const home = path.join(dir, 'home');
fs.mkdirSync(home, { mode: 0o700 });
const script = path.join(ROOT, 'test/servers/basic.mjs');
const servers = Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`server${k}`, { command: process.execPath, args: [script] }]));
fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify({ version: 1, servers }), { mode: 0o600 });
for (const p of [process.execPath, script, path.dirname(script)]) spawnSync(process.execPath, [WARDEN, '--home', home, 'allowlist', 'add', p]);

function cpuTicks(pid) {
  const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

async function measure(child, ready) {
  await ready;
  await new Promise((r) => setTimeout(r, 2000)); // let start-up work finish
  const t0 = cpuTicks(child.pid);
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const cpu = ((cpuTicks(child.pid) - t0) / TICKS / SECONDS) * 100;
  const rss = rssMb(child.pid);
  child.kill('SIGTERM');
  return { cpu, rss };
}

const daemon = spawn(process.execPath, [WARDEN, '--home', home, 'daemon', '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
let err = '';
const ready = new Promise((r) => daemon.stderr.on('data', (d) => ((err += d), /watching/.test(err) && r())));
const floor = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
const [d, f] = await Promise.all([measure(daemon, ready), measure(floor, Promise.resolve())]);
fs.rmSync(dir, { recursive: true, force: true });
console.log(`| idle over ${SECONDS} s | idle node process (floor) | mcp-warden daemon, 20 servers |`);
console.log('|---|---|---|');
console.log(`| CPU (% of one core) | ${f.cpu.toFixed(2)} | ${d.cpu.toFixed(2)} |`);
console.log(`| RSS (MB) | ${f.rss.toFixed(1)} | ${d.rss.toFixed(1)} |`);
