// mcp-warden benchmarks, each side by side with its baseline in one run (see docs/performance.md).
//   node bench/run.mjs [--rounds N] [--launches N] [--digest-mb N] [--before OTHER/dist/cli/main.js]
// Needs a build (npm run build). Writes bench/out/results.json and prints a Markdown table. With --before, a
// second build of the warden (e.g. the previous commit's, built in a git worktree) is measured beside this one
// in the same run, so that what a change costs is read off one table.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WARDEN = path.join(ROOT, 'dist/cli/main.js');
const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const ROUNDS = arg('rounds', 2000);
const LAUNCHES = arg('launches', 15);
const DIGEST_MB = arg('digest-mb', 500);
const BEFORE = process.argv.includes('--before') ? path.resolve(process.argv[process.argv.indexOf('--before') + 1]) : undefined;

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const median = (xs) => quantile(xs, 0.5);

/** A line-level JSON-RPC client over a spawned process. */
function session(cmd, args) {
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'ignore'] });
  let buf = '';
  const waiting = new Map();
  child.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const msg = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      if (msg.id !== undefined && waiting.has(msg.id)) {
        waiting.get(msg.id)(msg);
        waiting.delete(msg.id);
      }
    }
  });
  let nextId = 1;
  const request = (method, params) =>
    new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  const notify = (method) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method }) + '\n');
  const close = () => new Promise((resolve) => (child.once('exit', resolve), child.stdin.end()));
  return { request, notify, close };
}

const INIT = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } };

/** Round trips on three live sessions, in alternating blocks, so that drift in machine load hits all alike. */
async function roundTrips(sides) {
  const sessions = sides.map(([cmd, args]) => session(cmd, args));
  for (const s of sessions) {
    await s.request('initialize', INIT);
    s.notify('notifications/initialized');
    await s.request('tools/list', {});
  }
  const samples = sessions.map(() => []);
  const BLOCK = 100; // calls in a row on one session (a client talks to one server at a time), then the next
  for (let done = -200; done < ROUNDS; done += BLOCK) {
    for (let k = 0; k < sessions.length; k++) {
      for (let i = 0; i < BLOCK; i++) {
        const t = process.hrtime.bigint();
        await sessions[k].request('tools/call', { name: 'echo', arguments: { message: `round ${done + i}` } });
        if (done >= 0) samples[k].push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }
  }
  await Promise.all(sessions.map((s) => s.close()));
  return samples;
}

/** Admitting a 1,000-tool listing (lossless parse, RFC 8785 and exact digests, per-field prints) vs a floor. */
async function listingCost() {
  const { readJson } = await import(path.join(ROOT, 'dist/protocol/json/reader.js'));
  const { ListingAdmitter } = await import(path.join(ROOT, 'dist/surface/admit.js'));
  const { createHash } = await import('node:crypto');
  const corpus = fs.readFileSync(path.join(ROOT, 'test/fixtures/surfaces/corpus.jsonl'), 'utf8').split('\n').filter(Boolean);
  const real = corpus.flatMap((l) => JSON.parse(JSON.parse(l).tools_list_body).result.tools);
  const tools = Array.from({ length: 1000 }, (_, i) => ({ ...real[i % real.length], name: `tool_${i}` }));
  const body = Buffer.from(JSON.stringify({ tools }));
  const ours = [];
  const floor = [];
  for (let i = 0; i < 30; i++) {
    let t = process.hrtime.bigint();
    new ListingAdmitter().page(readJson(body, { maxBytes: 64 << 20, maxDepth: 64 }));
    ours.push(Number(process.hrtime.bigint() - t) / 1e6);
    t = process.hrtime.bigint();
    for (const tool of JSON.parse(body.toString()).tools) createHash('sha256').update(JSON.stringify(tool)).digest('hex');
    floor.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return { bytes: body.length, oursMs: median(ours.slice(5)), floorMs: median(floor.slice(5)) };
}

async function launchTimes(cmd, args) {
  const samples = [];
  for (let i = 0; i < LAUNCHES; i++) {
    const t = process.hrtime.bigint();
    const s = session(cmd, args);
    await s.request('initialize', INIT);
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
    await s.close();
  }
  return samples;
}

function digestThroughput(file, bytes) {
  const ours = [];
  const openssl = [];
  for (let i = 0; i < 3; i++) {
    // Timed inside the process (node's own start-up is measured by the launch benchmark).
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', `import { digestFileAsync } from ${JSON.stringify(path.join(ROOT, 'dist/attest/digest.js'))}; const t = process.hrtime.bigint(); await digestFileAsync(${JSON.stringify(file)}); console.log(Number(process.hrtime.bigint() - t) / 1e9);`]);
    ours.push(Number(out.toString()));
    const t = process.hrtime.bigint();
    execFileSync('openssl', ['dgst', '-sha256', file]);
    openssl.push(Number(process.hrtime.bigint() - t) / 1e9);
  }
  const mbps = (secs) => bytes / 1e6 / Math.min(...secs);
  return { ours: mbps(ours), openssl: mbps(openssl) };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warden-bench-'));
const home = path.join(dir, 'home');
const add = spawnSync(process.execPath, [WARDEN, '--home', home, 'add', 'everything', '--yes', '--', process.execPath, EVERYTHING, 'stdio'], { encoding: 'utf8' });
if (add.status !== 0) throw new Error(add.stderr);
const direct = [process.execPath, [EVERYTHING, 'stdio']];
const raw = [process.execPath, [path.join(ROOT, 'bench/raw-relay.mjs'), process.execPath, EVERYTHING, 'stdio']];
const warden = [process.execPath, [WARDEN, '--home', home, 'run', 'everything']];
let before;
if (BEFORE) {
  const beforeHome = path.join(dir, 'home-before');
  const r = spawnSync(process.execPath, [BEFORE, '--home', beforeHome, 'add', 'everything', '--yes', '--', process.execPath, EVERYTHING, 'stdio'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  before = [process.execPath, [BEFORE, '--home', beforeHome, 'run', 'everything']];
}

const results = { machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version }, rounds: ROUNDS, launches: LAUNCHES };
const [rtDirect, rtRaw, rtWarden, rtBefore] = await roundTrips(before ? [direct, raw, warden, before] : [direct, raw, warden]);
const rt = { direct: rtDirect, raw: rtRaw, warden: rtWarden, ...(before ? { before: rtBefore } : {}) };
results.roundTripMs = Object.fromEntries(Object.entries(rt).map(([k, v]) => [k, { p50: median(v), p95: quantile(v, 0.95) }]));
await launchTimes(...warden); // warm the digest cache and the page cache
if (before) await launchTimes(...before);
const lt = { direct: await launchTimes(...direct), raw: await launchTimes(...raw), warden: await launchTimes(...warden), ...(before ? { before: await launchTimes(...before) } : {}) };
results.launchMs = Object.fromEntries(Object.entries(lt).map(([k, v]) => [k, { p50: median(v), min: Math.min(...v) }]));
results.listing = await listingCost();
const big = path.join(dir, 'big.bin');
execFileSync('head', ['-c', String(DIGEST_MB * 1024 * 1024), '/dev/urandom'], { stdio: ['ignore', fs.openSync(big, 'w'), 'inherit'] });
results.digestMBps = digestThroughput(big, DIGEST_MB * 1024 * 1024);
fs.rmSync(dir, { recursive: true, force: true });

fs.mkdirSync(path.join(ROOT, 'bench/out'), { recursive: true });
fs.writeFileSync(path.join(ROOT, 'bench/out/results.json'), JSON.stringify(results, null, 2) + '\n');
const f = (x) => x.toFixed(3);
console.log(`machine: ${results.machine.cpus} × ${results.machine.model}, node ${results.machine.node}\n`);
console.log('| measure | direct | raw relay | mcp-warden run | warden − direct |');
console.log('|---|---|---|---|---|');
const r = results.roundTripMs;
console.log(`| tools/call echo round trip p50 (ms, ${ROUNDS} calls) | ${f(r.direct.p50)} | ${f(r.raw.p50)} | ${f(r.warden.p50)} | +${f(r.warden.p50 - r.direct.p50)} |`);
console.log(`| tools/call echo round trip p95 (ms) | ${f(r.direct.p95)} | ${f(r.raw.p95)} | ${f(r.warden.p95)} | +${f(r.warden.p95 - r.direct.p95)} |`);
const l = results.launchMs;
console.log(`| spawn to initialize result p50 (ms, ${LAUNCHES} launches, warm cache) | ${l.direct.p50.toFixed(0)} | ${l.raw.p50.toFixed(0)} | ${l.warden.p50.toFixed(0)} | +${(l.warden.p50 - l.direct.p50).toFixed(0)} |`);
if (before) {
  console.log(`\n| this build against --before (same run) | before | this build | difference |`);
  console.log('|---|---|---|---|');
  console.log(`| tools/call echo round trip p50 (ms) | ${f(r.before.p50)} | ${f(r.warden.p50)} | ${f(r.warden.p50 - r.before.p50)} |`);
  console.log(`| tools/call echo round trip p95 (ms) | ${f(r.before.p95)} | ${f(r.warden.p95)} | ${f(r.warden.p95 - r.before.p95)} |`);
  console.log(`| spawn to initialize result p50 (ms) | ${l.before.p50.toFixed(0)} | ${l.warden.p50.toFixed(0)} | ${(l.warden.p50 - l.before.p50).toFixed(0)} |`);
}
const ls = results.listing;
console.log(`\n| admit a 1,000-tool listing (${(ls.bytes / 1024).toFixed(0)} KiB, real tools from the corpus) | JSON.parse + JSON.stringify + sha256 per tool (floor) | mcp-warden (lossless parse, RFC 8785 + exact digests, prints) |`);
console.log('|---|---|---|');
console.log(`| median ms (25 runs) | ${ls.floorMs.toFixed(1)} | ${ls.oursMs.toFixed(1)} |`);
const d = results.digestMBps;
console.log(`\n| digest of a ${DIGEST_MB} MiB file | openssl dgst -sha256 | mcp-warden (node:crypto, 4 MiB double-buffered reads) | ratio |`);
console.log('|---|---|---|---|');
console.log(`| MB/s (best of 3; openssl includes its ~5 ms process start) | ${d.openssl.toFixed(0)} | ${d.ours.toFixed(0)} | ${(d.ours / d.openssl).toFixed(2)}× |`);
