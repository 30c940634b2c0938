import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

// A cgroup (v2) of the server's own, where the host lets us make one: every descendant stays in it whatever it
// does (setsid, double fork, cleared environment), and cgroup.kill (Linux 5.14) kills all of it at once, with
// no race against fork. The cgroup is made below the warden's own cgroup (a delegated subtree for a user, any
// directory for root); the warden steps into it only for the synchronous spawn() call, so the child is born
// inside, and steps back out at once. A server held before any code of its own runs (a node server behind the
// module guard's gate) joins it after spawn instead, off the warden's thread (docs/adr/0033-held-server-joins-
// its-cgroup.md). Where no writable cgroup2 hierarchy exists, launch goes on without one (the marker and the
// process tree still apply) — see docs/adr/0013-descendant-containment.md.

const NAME = /^mcp-warden-\d+-[0-9a-f]{16}$/;
const uid = typeof process.getuid === 'function' ? process.getuid() : 0;

export interface Cgroup {
  /** The session's cgroup directory. */
  dir: string;
  /** The warden's own cgroup directory, to step back into after spawn. */
  home: string;
}

/** The cgroup2 mount point and the warden's own cgroup directory under it, or undefined. */
function ownCgroupDir(): { mount: string; dir: string } | undefined {
  try {
    const line = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').find((l) => / - cgroup2 /.test(l));
    const own = fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.startsWith('0::'));
    if (!line || !own) return undefined;
    const fields = line.split(' ');
    const [root, mount] = [fields[3] as string, fields[4] as string];
    const ownPath = own.slice(3);
    if (!ownPath.startsWith(root)) return undefined;
    return { mount, dir: path.join(mount, ownPath.slice(root.length)) };
  } catch {
    return undefined;
  }
}

function moveTo(dir: string, pid: number): boolean {
  try {
    fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(pid));
    return true;
  } catch {
    return false;
  }
}

const moveSelf = (dir: string): boolean => moveTo(dir, process.pid);

/**
 * Makes the session's cgroup; undefined where there is no cgroup2 hierarchy to make it in, or it has no
 * cgroup.kill. Whether the warden may step into it is learnt at spawn (spawnInCgroup): a trial step in and out
 * here cost a second pair of migrations, each pair ~7-15 ms of the launch (an RCU grace period in the kernel),
 * and told nothing more — moving in and moving back need write access to the same cgroup.procs, the warden's own.
 */
export function createSessionCgroup(): Cgroup | undefined {
  const own = ownCgroupDir();
  if (!own) return undefined;
  const dir = path.join(own.dir, `mcp-warden-${process.pid}-${randomBytes(8).toString('hex')}`);
  try {
    fs.mkdirSync(dir, { mode: 0o755 });
  } catch {
    return undefined;
  }
  if (!fs.existsSync(path.join(dir, 'cgroup.kill'))) {
    rmdir(dir);
    return undefined;
  }
  return { dir, home: own.dir };
}

/** Runs a synchronous spawn with the warden inside the cgroup, so the child is born there. */
export function spawnInCgroup<T>(cg: Cgroup | undefined, spawnNow: () => T): { result: T; contained: boolean } {
  if (!cg || !moveSelf(cg.dir)) return { result: spawnNow(), contained: false };
  try {
    return { result: spawnNow(), contained: true };
  } finally {
    // If stepping out failed, killCgroup refuses to act on a cgroup the warden itself is in.
    moveSelf(cg.home);
  }
}

/**
 * Moves `pid` (all its threads) into the cgroup, on libuv's thread pool: the kernel's first migration in a while
 * waits for an RCU grace period (~15-20 ms here) before it looks the pid up, which must not hold this thread. Only
 * for a process that can run nothing of its own before the caller lets it (it cannot fork out of reach
 * meanwhile); the caller awaits the answer before letting it. `stillOurs` says, once the move is done, that the
 * process was not reaped meanwhile: a reaped child's pid may have gone to another process, which the move would
 * then have taken, so whatever is in the cgroup is moved back out and the answer is false. False also if the
 * process could not be moved; it is then not in the cgroup.
 */
export async function joinCgroup(cg: Cgroup, pid: number, stillOurs: () => boolean): Promise<boolean> {
  // One call on the pool: a write queued behind an asynchronous open would wait for this thread (busy digesting
  // the server's tree) between the two, and the kernel's wait would come after the digest instead of during it.
  let fd: number;
  try {
    fd = fs.openSync(path.join(cg.dir, 'cgroup.procs'), 'w');
  } catch {
    return false;
  }
  const text = Buffer.from(String(pid));
  const moved = await new Promise<boolean>((resolve) => fs.write(fd, text, 0, text.length, null, (err) => resolve(!err)));
  try {
    fs.closeSync(fd);
  } catch {
    // The write's answer is what counts; a close that fails leaves nothing to undo.
  }
  if (!moved) return false;
  if (stillOurs()) return true;
  for (const member of cgroupProcs(cg.dir)) moveTo(cg.home, member);
  return false;
}

export function cgroupProcs(dir: string): number[] {
  try {
    return fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** SIGKILLs every process in the cgroup at once (cgroup.kill). False if it could not (or must not). */
export function killCgroup(dir: string): boolean {
  if (cgroupProcs(dir).includes(process.pid)) return false;
  try {
    fs.writeFileSync(path.join(dir, 'cgroup.kill'), '1');
    return true;
  } catch {
    return false;
  }
}

function populated(dir: string): boolean {
  try {
    return /^populated 1$/m.test(fs.readFileSync(path.join(dir, 'cgroup.events'), 'utf8'));
  } catch {
    return false;
  }
}

function rmdir(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // EBUSY while populated, ENOENT if gone.
  }
}

/** Removes the cgroup once it is empty (exited members linger until reaped); one still populated stays. */
export async function removeCgroup(cg: { dir: string }, ms = 1000): Promise<void> {
  const deadline = Date.now() + ms;
  while (populated(cg.dir) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  rmdir(cg.dir);
}

/**
 * Removes the empty session cgroups of wardens that are gone: a warden killed outright leaves its cgroup behind,
 * and where its run record is never swept (its home was removed) nothing else would remove it. Only directories
 * of this warden's naming below its own cgroup, whose warden pid is not a live process (a pid now reused keeps
 * its directory: harmless) and which hold no process (rmdir refuses a populated one anyway). Returns how many.
 */
export function removeStaleCgroups(): number {
  const own = ownCgroupDir();
  if (!own) return 0;
  let names: string[];
  try {
    names = fs.readdirSync(own.dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (!NAME.test(name)) continue;
    const pid = Number(name.split('-')[2]);
    if (pid === process.pid || pidAlive(pid)) continue;
    const dir = path.join(own.dir, name);
    if (populated(dir)) continue;
    try {
      fs.rmdirSync(dir);
      removed++;
    } catch {
      // EBUSY: something joined it meanwhile; ENOENT: removed by another sweep.
    }
  }
  return removed;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A cgroup directory named by a run record, if it is one this warden could have made: a real directory
 * called mcp-warden-PID-HEX on the cgroup2 mount, owned by the warden's uid. Anything else is ignored.
 */
export function recordedCgroup(dir: unknown): string | undefined {
  if (typeof dir !== 'string' || !path.isAbsolute(dir) || path.normalize(dir) !== dir || !NAME.test(path.basename(dir))) return undefined;
  const own = ownCgroupDir();
  if (!own || !dir.startsWith(own.mount + '/')) return undefined;
  try {
    const st = fs.lstatSync(dir);
    return st.isDirectory() && st.uid === uid ? dir : undefined;
  } catch {
    return undefined;
  }
}
