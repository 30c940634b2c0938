// From the server's first line to the initialize result reaching the client, in `mcp-warden run` of server-everything
// (the stretch in which the re-check after launch runs; ADR 0020), and spawn to initialize result.
//   node bench/first-line-release.mjs [--launches N] [DIST ...]
// Each DIST (default: dist; e.g. another commit's dist built in a git worktree) runs a copy of server-everything's
// package (bench/out/everything: its files, an entry that notes the wall-clock time of the server's first write to
// stdout, and a node_modules link to this checkout's, so the closure is the same packages) enrolled in a home of its
// own. Also, when the hook can be found in it, a copy of the first DIST without the re-check, for the floor.
// Launches are interleaved, N per build.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'bench/out');
const i = process.argv.indexOf('--launches');
const LAUNCHES = i > 0 ? Number(process.argv[i + 1]) : 20;
const dists = process.argv.slice(2).filter((a, k, all) => a !== '--launches' && all[k - 1] !== '--launches');
if (dists.length === 0) dists.push(path.join(ROOT, 'dist'));

const now = () => performance.timeOrigin + performance.now();
const server = path.join(OUT, 'everything');
fs.rmSync(server, { recursive: true, force: true });
fs.cpSync(path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything'), server, { recursive: true });
fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(server, 'node_modules'));
fs.writeFileSync(
  path.join(server, 'bench-entry.mjs'),
  `import fs from 'node:fs';
const write = process.stdout.write.bind(process.stdout);
let first = true;
process.stdout.write = (...args) => {
  if (first) fs.writeFileSync(process.env.FIRST_LINE_FILE, String(performance.timeOrigin + performance.now()));
  first = false;
  return write(...args);
};
await import('./dist/index.js');
`,
);

/** A copy of `dist` whose run-session's re-check hook does nothing, or undefined when the hook is not found. */
function withoutRecheck(dist) {
  const to = path.join(OUT, 'fl-floor', 'dist');
  fs.rmSync(path.dirname(to), { recursive: true, force: true });
  fs.cpSync(dist, to, { recursive: true });
  // As tsc writes it, or as scripts/bundle.mjs does (`beforeRelease:__name(async()=>recheckPlan(plan),…)`).
  const hook = /(atFirstLine|beforeRelease):\s*(__name\()?(async\s*)?\(\)\s*=>\s*recheckPlan\(\s*plan\s*\)/g;
  let found = false;
  for (const f of fs.readdirSync(to, { recursive: true })) {
    const file = path.join(to, String(f));
    if (!file.endsWith('.js') || file.includes(`${path.sep}preload${path.sep}`)) continue;
    const text = fs.readFileSync(file, 'utf8');
    const patched = text.replace(hook, '$1: $2async () => {}');
    if (patched !== text) {
      fs.writeFileSync(file, patched);
      found = true;
    }
  }
  return found ? path.join(to, 'cli/main.js') : undefined;
}

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'warden-bench-'));
const stamp = path.join(home, 'first-line');
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }) + '\n';
const sides = dists.map((d) => ({ name: path.relative(ROOT, path.resolve(d)) || d, cli: path.join(path.resolve(d), 'cli/main.js') }));
const floor = withoutRecheck(path.resolve(dists[0]));
if (floor) sides.push({ name: `${sides[0].name} without the re-check`, cli: floor });
else console.log(`(no re-check hook found in ${dists[0]}: no floor)`);
for (const [k, s] of sides.entries()) {
  s.home = path.join(home, `h${k}`);
  s.spawnMs = [];
  s.releaseMs = [];
  const r = spawnSync(process.execPath, [s.cli, '--home', s.home, 'add', 'everything', '--yes', '--env', `FIRST_LINE_FILE=${stamp}`, '--', process.execPath, path.join(server, 'bench-entry.mjs'), 'stdio'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
}

function launch(s) {
  return new Promise((resolve, reject) => {
    fs.rmSync(stamp, { force: true });
    const t0 = now();
    const c = spawn(process.execPath, [s.cli, '--home', s.home, 'run', 'everything'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let at;
    c.stderr.on('data', (d) => (err += d));
    c.stdout.on('data', (d) => {
      out += d;
      if (at === undefined && out.includes('\n')) {
        at = now();
        if (!JSON.parse(out.slice(0, out.indexOf('\n'))).result) reject(new Error(out));
        c.stdin.end();
      }
    });
    c.once('close', () => {
      if (at === undefined || !fs.existsSync(stamp)) return reject(new Error(`no answer or no first line: ${err}`));
      resolve({ ms: at - t0, release: at - Number(fs.readFileSync(stamp, 'utf8')) });
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
console.log('| build | first server line to client p50 / p25 / min (ms) | spawn to initialize result p50 / min (ms) |\n|---|---|---|');
for (const s of sides) {
  console.log(`| ${s.name} | ${q(s.releaseMs, 0.5).toFixed(1)} / ${q(s.releaseMs, 0.25).toFixed(1)} / ${Math.min(...s.releaseMs).toFixed(1)} | ${q(s.spawnMs, 0.5).toFixed(0)} / ${Math.min(...s.spawnMs).toFixed(0)} |`);
}
