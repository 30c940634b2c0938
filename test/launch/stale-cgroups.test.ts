import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writableCgroup } from '../helpers/cgroup.js';
import { launchAndClose, tempDir } from '../helpers/warden.js';
import { basicHome } from '../helpers/run-template.js';

// A warden killed outright leaves its session cgroup behind; where its run record is never swept (its home was
// removed), the next sweep of any home removes it once it is empty and its warden is gone
// (removeStaleCgroups, src/launch/cgroup.ts).

let home: string;
const made: string[] = [];
const parent = writableCgroup();

beforeAll(() => {
  home = tempDir();
  basicHome(home);
});
afterAll(() => {
  for (const dir of made) {
    for (const pid of fs.existsSync(dir) ? fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean) : []) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
  fs.rmSync(home, { recursive: true, force: true });
});

/** A session cgroup as a warden of pid `pid` names it. */
function cgroupOf(pid: number): string {
  const dir = path.join(parent as string, `mcp-warden-${pid}-${randomBytes(8).toString('hex')}`);
  fs.mkdirSync(dir);
  made.push(dir);
  return dir;
}

describe('session cgroups of wardens that are gone', () => {
  it("are removed by the next sweep when empty; a live warden's and a populated one stay", async () => {
    if (parent === undefined) {
      await launchAndClose(home, 'basic'); // no writable cgroup2 here: nothing to remove, and a launch still works
      return;
    }
    const deadPid = spawnSync('true').pid as number;
    const stale = cgroupOf(deadPid);
    const live = cgroupOf(process.pid);
    const occupied = cgroupOf(spawnSync('true').pid as number);
    const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
    fs.writeFileSync(path.join(occupied, 'cgroup.procs'), String(holder.pid));
    try {
      await launchAndClose(home, 'basic');
      expect({ stale: fs.existsSync(stale), live: fs.existsSync(live), occupied: fs.existsSync(occupied) }).toEqual({ stale: false, live: true, occupied: true });
    } finally {
      holder.kill('SIGKILL');
      await new Promise((r) => holder.once('exit', r));
      for (const dir of [live, occupied]) {
        for (let i = 0; i < 100 && fs.existsSync(dir); i++) {
          try {
            fs.rmdirSync(dir);
          } catch {
            await new Promise((r) => setTimeout(r, 10)); // an exited member lingers until reaped
          }
        }
      }
    }
  });
});
