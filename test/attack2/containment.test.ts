import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeFor65534 } from '../helpers/host.js';
import { INITIALIZE, RawSession, SERVERS, addServer, alive, tempDir } from '../helpers/warden.js';

// Attack (hostile server running as root, as on this machine kind): a descendant that changes uid, clears its
// environment and double-forks. Marker and tree never kill another uid; only the session cgroup can.

let dir: string;
let home: string;
/** A grandchild as the server reported it: its pid and its start time (a pid alone is reused: pid_max is 32768
 *  here, and threads take pids too, so a busy run can give a dead grandchild's pid to another process). */
interface Reported {
  pid: number;
  start: string;
}
const reported: Reported[] = [];

/** Whether the process reported is alive: its pid runs, not a zombie, and started when it was reported. */
function aliveAs({ pid, start }: Reported): boolean {
  if (!alive(pid)) return false;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] === start;
  } catch {
    return false;
  }
}

beforeEach(() => {
  dir = tempDir('warden-a2-cont-');
  fs.chmodSync(dir, 0o711); // the uid-65534 grandchild needs nothing here, but its cwd must be enterable
  home = path.join(dir, 'home');
});
afterEach(() => {
  for (const r of reported.splice(0)) if (aliveAs(r)) process.kill(r.pid, 'SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

async function pidsIn(file: string, n: number, ms = 15_000): Promise<Reported[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => ({ pid: Number(l.split(' ')[1]), start: l.split(' ')[2] as string })) : [];
    if (got.length >= n) return got;
    if (Date.now() > deadline) throw new Error('no pid reported');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Whether the process is gone (or a zombie) within `ms`: the session's close may still be reaping it. */
async function goneWithin(r: Reported, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (aliveAs(r)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}

describe('descendants that change uid', () => {
  // Needs root to change uid (CI and this machine kind run as root); elsewhere it is reported as skipped.
  it.runIf(process.getuid?.() === 0)('held (where the session has a cgroup): a double-forked, env-cleared grandchild running as uid 65534 is stopped at close', async () => {
    const pidFile = path.join(dir, 'pids');
    addServer(home, 'uid', [process.execPath, path.join(SERVERS, 'attack2/uid-escaper.mjs'), pidFile, nodeFor65534(dir)]);
    for (const r of fs.existsSync(pidFile) ? await pidsIn(pidFile, 1) : []) reported.push(r);
    fs.rmSync(pidFile, { force: true });
    const s = new RawSession(home, 'uid');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    const [grandchild] = (await pidsIn(pidFile, 1)) as [Reported];
    reported.push(grandchild);
    expect(aliveAs(grandchild)).toBe(true);
    s.close();
    await s.exited;
    expect(await goneWithin(grandchild, 5_000)).toBe(true);
    // and the ones `add` left behind (its two enrollment launches) are gone too
    for (const r of reported.slice(0, -1)) expect(aliveAs(r)).toBe(false);
  });
});
