// Soak: launch/teardown cycles through `mcp-warden run` of a small server (test/servers/basic.mjs, enrolled with
// `add` in a temporary home), one after another, then rounds of concurrent sessions. Each session does what a
// client does: initialize, notifications/initialized, tools/list, one tools/call, then EOF on stdin. What must
// stay flat is sampled as it goes:
// - per session, while it is live: the warden's RSS and open descriptors (each `run` is a new process, so these
//   show whether a session costs more as the home grows: audit log, cache);
// - between cycles: processes left over from the soak's sessions (any process whose command line names the
//   soak's home or its private copy of the servers), zombies among them or among the soak's own children,
//   records left in the home's run/ directory, session cgroups left (mcp-warden-<pid>-* of the soak's wardens
//   under the soak's cgroup2 directory), the soak process's own descriptors and RSS, and the machine's process count (shared: noisy);
// - launch-to-initialize-result time, to see whether it grows with the audit log.
//   node bench/soak.mjs [--cycles 1000] [--every 100] [--concurrent 100] [--rounds 3] [--canary-slack-ms N]
// (--cycles 0 or --rounds 0 skips that part.) Every session runs the server's session-start canaries; with 100
// sessions starting at once on a small machine their latency limit refuses some of them, as designed
// (docs/canaries.md): those are counted as "refused by a canary", not as failures, and still torn down and
// checked. --canary-slack-ms sets the server's canaryLatency.slackMs to measure all of them live.
// Exits 1 when a session failed otherwise or anything was left behind at the end.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WARDEN = path.join(ROOT, 'dist/cli/main.js');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const CYCLES = arg('cycles', 1000);
const EVERY = arg('every', Math.max(1, Math.round(CYCLES / 10)));
const CONCURRENT = arg('concurrent', 100);
const ROUNDS = arg('rounds', 3);
const SLACK = arg('canary-slack-ms', undefined);
const SESSION_TIMEOUT_MS = 300_000;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warden-soak-'));
const home = path.join(dir, 'home');
const servers = path.join(dir, 'servers');
fs.cpSync(path.join(ROOT, 'test/servers'), servers, { recursive: true });
/** Wardens not yet ended (to stop them if the soak is interrupted). */
const live_ = new Set();

// Interrupted: end the live sessions as a client would (their wardens stop their groups), then clean up.
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, async () => {
    console.error(`\n${sig}: ending ${live_.size} live sessions`);
    await Promise.all([...live_].map((c) => new Promise((r) => (c.once('exit', r), c.kill('SIGTERM')))));
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  });
}

const add = spawnSync(process.execPath, [WARDEN, '--home', home, 'add', 'basic', '--yes', '--', process.execPath, path.join(servers, 'basic.mjs')], { encoding: 'utf8' });
if (add.status !== 0) throw new Error(`add failed (${add.status}): ${add.stderr}${add.stdout}`);
if (SLACK !== undefined) {
  const file = path.join(home, 'servers.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8'));
  config.servers.basic.canaryLatency = { factor: 3, slackMs: SLACK };
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(config, null, 2), { mode: 0o600 });
  fs.renameSync(`${file}.tmp`, file);
}

// ---- what is measured ---------------------------------------------------------------------------------------

const statusOf = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return '';
  }
};
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(statusOf(pid))?.[1] ?? NaN) / 1024;
const fdCount = (pid) => {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
};

/** Every process: pid, ppid, state, command line. */
function processes() {
  const out = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      let cmdline = '';
      try {
        cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      } catch {}
      out.push({ pid: Number(name), state: rest[0], ppid: Number(rest[1]), cmdline });
    } catch {} // gone meanwhile
  }
  return out;
}

/** The soak's cgroup2 directory, where the wardens it starts make their session cgroups. */
function ownCgroupDir() {
  try {
    const line = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').find((l) => / - cgroup2 /.test(l));
    const own = fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.startsWith('0::'));
    if (!line || !own) return undefined;
    const [root, mount] = [line.split(' ')[3], line.split(' ')[4]];
    return path.join(mount, own.slice(3).slice(root.length));
  } catch {
    return undefined;
  }
}
const CGROUP_DIR = ownCgroupDir();
/** Pids of the wardens the soak started: a session cgroup is named mcp-warden-<warden pid>-<random>. */
const wardenPids = new Set();
const cgroupsLeft = () => (CGROUP_DIR ? fs.readdirSync(CGROUP_DIR).filter((n) => wardenPids.has(Number(/^mcp-warden-(\d+)-/.exec(n)?.[1]))).length : NaN);
const runRecords = () => (fs.existsSync(path.join(home, 'run')) ? fs.readdirSync(path.join(home, 'run')).length : 0);
const size = (p) => (fs.existsSync(p) ? fs.statSync(p).size : 0);
const dirSize = (p) => (fs.existsSync(p) ? fs.readdirSync(p).reduce((n, f) => n + size(path.join(p, f)), 0) : 0);

/** What the machine holds of the soak between sessions. */
function machine() {
  const all = processes();
  const ours = all.filter((p) => p.pid !== process.pid && (p.cmdline.includes(home) || p.cmdline.includes(servers)));
  return {
    procs: all.length,
    left: ours.length,
    zombies: ours.filter((p) => p.state === 'Z').length + all.filter((p) => p.ppid === process.pid && p.state === 'Z').length,
    runRecords: runRecords(),
    cgroups: cgroupsLeft(),
    selfFds: fdCount(process.pid),
    selfRss: rssMb(process.pid),
    audit: size(path.join(home, 'audit.log')),
    cache: dirSize(path.join(home, 'cache')),
  };
}

// ---- one session ------------------------------------------------------------------------------------------------

const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'soak', version: '1' } } });
const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'soak' } } });

/** Starts `run basic`, drives it to a live session with a call answered; `end()` closes stdin and awaits the exit. */
function session() {
  const t0 = performance.now();
  const child = spawn(process.execPath, [WARDEN, '--home', home, 'run', 'basic'], { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.on('error', () => {});
  wardenPids.add(child.pid);
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const answers = new Map();
  const waiting = new Map();
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const msg = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      answers.set(msg.id, msg);
      waiting.get(msg.id)?.();
    }
  });
  const answer = (id) =>
    answers.has(id)
      ? Promise.resolve(answers.get(id))
      : new Promise((resolve, reject) => {
          const t = setTimeout(() => reject(new Error(`no answer to ${id} in ${SESSION_TIMEOUT_MS} ms: ${stderr}`)), SESSION_TIMEOUT_MS);
          waiting.set(id, () => (clearTimeout(t), resolve(answers.get(id))));
          exited.then(({ code }) => reject(new Error(`warden exited (${code}) before answering ${id}: ${stderr}`)));
        });
  const live = (async () => {
    child.stdin.write(INITIALIZE + '\n');
    const init = await answer(1);
    if (!init.result) {
      const refusal = new Error(`initialize refused: ${JSON.stringify(init.error)}`);
      if (/canary .* failed \(latency/.test(init.error?.message ?? '')) refusal.canary = true;
      throw refusal;
    }
    const initMs = performance.now() - t0;
    child.stdin.write(`${INITIALIZED}\n${LIST}\n`);
    const list = await answer(2);
    if (list.result?.tools?.length !== 2) throw new Error(`tools/list: ${JSON.stringify(list)}`);
    child.stdin.write(CALL + '\n');
    const call = await answer(3);
    if (call.result?.content?.[0]?.text !== 'Echo: soak') throw new Error(`tools/call: ${JSON.stringify(call)}`);
    return { initMs, rss: rssMb(child.pid), fds: fdCount(child.pid) };
  })();
  live.catch(() => {});
  /** `refused`: the session was refused (exit 3 expected). */
  const end = async (refused = false) => {
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), SESSION_TIMEOUT_MS);
    const exit = await exited;
    clearTimeout(timer);
    live_.delete(child);
    if (exit.code !== (refused ? 3 : 0)) throw new Error(`warden exited with ${exit.code ?? exit.signal}: ${stderr}`);
    return performance.now() - t0;
  };
  live_.add(child);
  return { live, end, child };
}

// ---- the soak ----------------------------------------------------------------------------------------------------

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const max = (xs) => Math.max(...xs);
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
const kb = (x) => (x / 1024).toFixed(0);
let failures = 0;
let canaryRefused = 0;

console.log(`mcp-warden soak: ${CYCLES} sequential cycles (sampled every ${EVERY}), then ${ROUNDS} rounds of ${CONCURRENT} concurrent sessions`);
console.log(`node ${process.version}, ${os.cpus().length} cores, cgroup dir ${CGROUP_DIR ?? '(none: sessions run without a cgroup)'}\n`);

const before = machine();
console.log('| after cycle | init ms (median / max) | cycle ms (median) | warden RSS MB (median / max) | warden fds (median / max) | left procs | zombies | run/ records | cgroups | soak fds | soak RSS MB | audit.log KB | cache KB | machine procs |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
const row = (label, w, m) =>
  console.log(
    `| ${label} | ${w ? `${f1(median(w.init))} / ${f1(max(w.init))}` : ''} | ${w ? f1(median(w.cycle)) : ''} | ${w ? `${f1(median(w.rss))} / ${f1(max(w.rss))}` : ''} | ${w ? `${median(w.fds)} / ${max(w.fds)}` : ''} | ${m.left} | ${m.zombies} | ${m.runRecords} | ${m.cgroups} | ${m.selfFds} | ${f1(m.selfRss)} | ${kb(m.audit)} | ${kb(m.cache)} | ${m.procs} |`,
  );
row('0 (before)', undefined, before);

let window = { init: [], cycle: [], rss: [], fds: [] };
const started = performance.now();
for (let i = 1; i <= CYCLES; i++) {
  const s = session();
  try {
    const live = await s.live;
    const cycleMs = await s.end();
    window.init.push(live.initMs);
    window.cycle.push(cycleMs);
    window.rss.push(live.rss);
    window.fds.push(live.fds);
  } catch (err) {
    if (err.canary) {
      canaryRefused++;
      await s.end(true).catch((e) => (failures++, console.error(`cycle ${i}: ${e.message}`)));
    } else {
      failures++;
      console.error(`cycle ${i}: ${err.message}`);
      await s.end(true).catch(() => {});
    }
  }
  if (i % EVERY === 0 || i === CYCLES) {
    row(String(i), window.init.length ? window : undefined, machine());
    window = { init: [], cycle: [], rss: [], fds: [] };
  }
}
const sequentialS = (performance.now() - started) / 1000;
console.log(`\n${CYCLES} cycles in ${sequentialS.toFixed(0)} s (${failures} failed, ${canaryRefused} refused by a canary)\n`);

console.log('| round | all answered (s) | refused by a canary | live: wardens | live: servers | live: run/ records | live: cgroups | warden RSS MB (median / max) | warden fds (median / max) | init ms (median / max) | after: left procs | zombies | run/ records | cgroups | soak fds | machine procs |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (let r = 1; r <= ROUNDS; r++) {
  const t0 = performance.now();
  const sessions = Array.from({ length: CONCURRENT }, () => session());
  const lives = await Promise.allSettled(sessions.map((s) => s.live));
  const ready = (performance.now() - t0) / 1000;
  const ok = lives.filter((l) => l.status === 'fulfilled').map((l) => l.value);
  let refusedNow = 0;
  for (const l of lives) {
    if (l.status === 'fulfilled') continue;
    if (l.reason.canary) refusedNow++;
    else (failures++, console.error(`round ${r}: ${l.reason.message}`));
  }
  canaryRefused += refusedNow;
  const procs = processes();
  const wardens = procs.filter((p) => p.cmdline.includes(home) && p.state !== 'Z').length;
  const serversLive = procs.filter((p) => p.cmdline.includes(servers) && p.state !== 'Z').length;
  const liveRecords = runRecords();
  const liveCgroups = cgroupsLeft();
  const ends = await Promise.allSettled(sessions.map((s, k) => s.end(lives[k].status === 'rejected')));
  ends.forEach((e, k) => {
    const failedBefore = lives[k].status === 'rejected' && !lives[k].reason.canary; // counted already
    if (e.status === 'rejected' && !failedBefore) (failures++, console.error(`round ${r}: ${e.reason.message}`));
  });
  const m = machine();
  console.log(
    `| ${r} | ${ready.toFixed(1)} | ${refusedNow} | ${wardens} | ${serversLive} | ${liveRecords} | ${liveCgroups} | ${f1(median(ok.map((l) => l.rss)))} / ${f1(max(ok.map((l) => l.rss)))} | ${median(ok.map((l) => l.fds))} / ${max(ok.map((l) => l.fds))} | ${f1(median(ok.map((l) => l.initMs)))} / ${f1(max(ok.map((l) => l.initMs)))} | ${m.left} | ${m.zombies} | ${m.runRecords} | ${m.cgroups} | ${m.selfFds} | ${m.procs} |`,
  );
}

const end = machine();
const leftBehind = end.left + end.zombies + end.runRecords + (Number.isFinite(end.cgroups) ? end.cgroups : 0);
console.log(`\nfailed sessions: ${failures}; refused by a canary: ${canaryRefused}; left behind at the end: ${end.left} processes, ${end.zombies} zombies, ${end.runRecords} run/ records, ${end.cgroups} cgroups`);
fs.rmSync(dir, { recursive: true, force: true });
process.exit(failures > 0 || leftBehind > 0 ? 1 : 0);
