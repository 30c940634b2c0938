// From the server's first line to the first byte released to the client, in `mcp-warden run` of server-everything
// (the stretch in which the re-check after launch runs; ADR 0019), and spawn to initialize result.
//   node bench/first-line-release.mjs [--launches N] [DIST ...]
// Each DIST (default: dist; e.g. another commit's dist built in a git worktree) is copied to bench/out/ with two
// timestamps added (ServerChannel.onLine, Session.toClient) and printed at exit; a copy of the first DIST without
// the re-check gives the floor. The warden refuses to run with a preload (WARDEN_PRELOADED), hence the copies.
// Launches are interleaved, N per build.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const i = process.argv.indexOf('--launches');
const LAUNCHES = i > 0 ? Number(process.argv[i + 1]) : 20;
const dists = process.argv.slice(2).filter((a, k, all) => a !== '--launches' && all[k - 1] !== '--launches');
if (dists.length === 0) dists.push(path.join(ROOT, 'dist'));

function patch(file, from, to) {
  const text = fs.readFileSync(file, 'utf8');
  if (!text.includes(from)) throw new Error(`${file}: no ${JSON.stringify(from)}`);
  fs.writeFileSync(file, text.replace(from, to));
}

function instrumented(dist, name, recheck) {
  const to = path.join(ROOT, 'bench/out', name, 'dist');
  fs.rmSync(path.dirname(to), { recursive: true, force: true });
  fs.cpSync(dist, to, { recursive: true });
  patch(path.join(to, 'proxy/channel.js'), '    onLine(bytes) {\n', '    onLine(bytes) {\n        globalThis.__firstLine ??= performance.now();\n');
  patch(path.join(to, 'proxy/session.js'), '    toClient(bytes) {\n', '    toClient(bytes) {\n        globalThis.__released ??= performance.now();\n');
  fs.appendFileSync(path.join(to, 'proxy/channel.js'), '\nprocess.on("exit", () => { if (globalThis.__released !== undefined) process.stderr.write(`FIRST-LINE-TO-RELEASE ${globalThis.__released - globalThis.__firstLine}\\n`); });\n');
  if (!recheck) {
    const rs = path.join(to, 'supervise/run-session.js');
    const text = fs.readFileSync(rs, 'utf8');
    const hook = /(atFirstLine|beforeRelease): (async )?\(\) => recheckPlan\(plan\),/;
    if (!hook.test(text)) throw new Error(`${rs}: no re-check hook`);
    fs.writeFileSync(rs, text.replace(hook, '$1: undefined,'));
  }
  return path.join(to, 'cli/main.js');
}

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'warden-bench-'));
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }) + '\n';
const sides = [...dists.map((d, k) => ({ name: path.relative(ROOT, path.resolve(d)) || d, cli: instrumented(path.resolve(d), `fl-${k}`, true) })), { name: `${path.relative(ROOT, path.resolve(dists[0]))} without the re-check`, cli: instrumented(path.resolve(dists[0]), 'fl-floor', false) }];
for (const [k, s] of sides.entries()) {
  s.home = path.join(home, `h${k}`);
  s.spawnMs = [];
  s.releaseMs = [];
  const r = spawnSync(process.execPath, [s.cli, '--home', s.home, 'add', 'everything', '--yes', '--', process.execPath, EVERYTHING, 'stdio'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
}

function launch(s) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c = spawn(process.execPath, [s.cli, '--home', s.home, 'run', 'everything'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let ms;
    c.stderr.on('data', (d) => (err += d));
    c.stdout.on('data', (d) => {
      out += d;
      if (ms === undefined && out.includes('\n')) {
        ms = performance.now() - t0;
        if (!JSON.parse(out.slice(0, out.indexOf('\n'))).result) reject(new Error(out));
        c.stdin.end();
      }
    });
    c.once('close', () => {
      const m = /FIRST-LINE-TO-RELEASE ([\d.]+)/.exec(err);
      if (!m || ms === undefined) return reject(new Error(`no timing: ${err}`));
      resolve({ ms, release: Number(m[1]) });
    });
    c.stdin.write(INIT);
  });
}

for (const s of sides) await launch(s); // warms the digest cache and the page cache
for (let n = 0; n < LAUNCHES; n++) {
  for (const s of n % 2 ? [...sides].reverse() : sides) {
    const r = await launch(s);
    s.spawnMs.push(r.ms);
    s.releaseMs.push(r.release);
  }
}
fs.rmSync(home, { recursive: true, force: true });
const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.floor(p * (xs.length - 1))];
console.log(`${LAUNCHES} launches each, interleaved; ${os.cpus().length} CPUs, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log('| build | first line to release p50 / p25 / min (ms) | spawn to initialize result p50 / min (ms) |\n|---|---|---|');
for (const s of sides) {
  console.log(`| ${s.name} | ${q(s.releaseMs, 0.5).toFixed(1)} / ${q(s.releaseMs, 0.25).toFixed(1)} / ${Math.min(...s.releaseMs).toFixed(1)} | ${q(s.spawnMs, 0.5).toFixed(0)} / ${Math.min(...s.spawnMs).toFixed(0)} |`);
}
