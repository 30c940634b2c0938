// Every process and temporary directory a bench starts or makes is registered here, so that it is ended and
// removed on every way out: normal end, a thrown error, SIGINT/SIGTERM, process exit.
// Processes are spawned in their own process group (detached: setsid), so that a relay's server child can be
// killed with it; a warden is first asked to stop (EOF, then SIGTERM: it stops its server's cgroup itself).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const live = new Set();
const dirs = new Set();
/** Every process group started (for the leftover check) and every warden pid (its server is in cgroup mcp-warden-PID-*). */
const groups = new Set();

export function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.add(dir);
  return dir;
}

export function removeDir(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  dirs.delete(dir);
}

/** Spawns `cmd args` as a process group leader with piped stdio and registers it. */
export function start(cmd, args, options = {}) {
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, ...options });
  child.stdin.on('error', () => {}); // EPIPE when it is gone: seen as its exit
  if (child.pid === undefined) throw new Error(`cannot spawn ${cmd}`);
  live.add(child);
  groups.add(child.pid);
  child.exited = new Promise((resolve) => child.once('exit', (code, signal) => (live.delete(child), resolve({ code, signal }))));
  return child;
}

const within = (p, ms) => Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), ms).unref())]);
const killGroup = (pid, sig) => {
  try {
    process.kill(-pid, sig);
  } catch {}
};

/** Ends a process as a client would (EOF on its stdin), then SIGTERM, then SIGKILL to its whole group. */
export async function stop(child, graceMs = 10_000) {
  if (child.exitCode === null && child.signalCode === null) {
    child.stdin.end();
    if (!(await within(child.exited, graceMs))) {
      killGroup(child.pid, 'SIGTERM');
      if (!(await within(child.exited, 5_000))) killGroup(child.pid, 'SIGKILL');
      await child.exited;
    }
  }
  // A relay that died leaves its server in its group: that one has no one to hear its EOF.
  killGroup(child.pid, 'SIGKILL');
}

export async function stopAll() {
  await Promise.all([...live].map((c) => stop(c, 3_000)));
}

function cleanupSync() {
  for (const c of live) killGroup(c.pid, 'SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
}
process.on('exit', cleanupSync);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, async () => {
    console.error(`\n${sig}: stopping ${live.size} processes, removing ${dirs.size} temporary directories`);
    await stopAll().catch(() => {});
    process.exit(130);
  });
}

/** Processes still alive from this bench: in one of its process groups, in a cgroup of one of its wardens, or naming one of its directories. */
export function leftovers(extraDirs = []) {
  const names = [...dirs, ...extraDirs];
  const out = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const cgroup = fs.readFileSync(`/proc/${name}/cgroup`, 'utf8');
      const warden = /mcp-warden-(\d+)-/.exec(cgroup)?.[1];
      if (groups.has(Number(rest[2])) || (warden && groups.has(Number(warden))) || names.some((d) => cmdline.includes(d))) {
        out.push(`${name} (${rest[0]}) ${cmdline.slice(0, 160)}`);
      }
    } catch {} // gone meanwhile
  }
  return out;
}
