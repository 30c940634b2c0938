// Canary latency calibration (docs/canaries.md): for each reference server, record baselines, then run
// `canary check` N times idle and N times with both cores busy, and report the medians against the limit
// (pinned p95 × factor + slack). A shim adding 180 ms must land far above the limit; load must stay below.
// This is where "the real server passes with both cores busy" is checked (busy loops would starve the other
// worker of the test suite): it exits 1 when a check of a real server failed, idle or loaded.
//   node bench/canary-calibration.mjs [--checks N]
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WARDEN = path.join(ROOT, 'dist/cli/main.js');
const i = process.argv.indexOf('--checks');
const CHECKS = i > 0 ? Number(process.argv[i + 1]) : 5;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warden-calib-'));
const home = path.join(dir, 'home');
const cli = (...args) => spawnSync(process.execPath, [WARDEN, '--home', home, ...args], { encoding: 'utf8', env: { ...process.env, MEMORY_FILE_PATH: path.join(dir, 'm.jsonl') } });
const servers = {
  everything: [path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
  filesystem: [path.join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'), dir],
  memory: [path.join(ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js')],
};
const rows = [];
for (const [id, args] of Object.entries(servers)) {
  const extra = id === 'memory' ? ['--env', `MEMORY_FILE_PATH=${path.join(dir, 'm.jsonl')}`] : [];
  const add = cli('add', id, '--yes', ...extra, '--', process.execPath, ...args);
  if (add.status !== 0) throw new Error(add.stderr + add.stdout);
  const base = JSON.parse(fs.readFileSync(path.join(home, 'warden.lock'), 'utf8')).servers[id].canaries['unknown-tool'];
  const run = () => JSON.parse(cli('canary', 'check', id, '--json').stdout).canaries[0];
  const idle = Array.from({ length: CHECKS }, run);
  const burners = [0, 1].map(() => spawn(process.execPath, ['-e', 'const e = Date.now() + 120000; while (Date.now() < e) {}'], { stdio: 'ignore' }));
  const loaded = Array.from({ length: CHECKS }, run);
  for (const b of burners) b.kill('SIGKILL');
  rows.push({ id, base, idle: idle.map((c) => c.medianMs), loaded: loaded.map((c) => c.medianMs), limit: idle[0].thresholdMs, fails: [...idle, ...loaded].filter((c) => !c.pass).length });
}
fs.rmSync(dir, { recursive: true, force: true });
console.log('| server | pinned p50 / p95 / max (ms) | check medians idle (ms) | check medians, both cores busy (ms) | limit (ms) | false failures |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.id} | ${r.base.p50_ms} / ${r.base.p95_ms} / ${r.base.max_ms} | ${r.idle.join(', ')} | ${r.loaded.join(', ')} | ${r.limit} | ${r.fails} of ${2 * CHECKS} |`);
if (rows.some((r) => r.fails > 0)) {
  console.error('false failures: a real server failed its own canary check');
  process.exitCode = 1;
}
