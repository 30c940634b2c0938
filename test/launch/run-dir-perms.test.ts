import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, RawSession, SERVERS, addServer, alive, auditEvents, tempDir } from '../helpers/warden.js';

// Issue 10 §5 (run/): the sweep kills process groups named by records under run/. A record another user could
// have written (in a group- or world-writable run/, owned by someone else, writable by others, a symlink) is
// never acted on: it is reported on stderr and audited, and nothing is killed on its word.

let home: string;
let runDir: string;
const victims: ChildProcess[] = [];

/** A process in a group of its own, as a planted record would name it. */
function victim(): number {
  const v = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
  victims.push(v);
  return v.pid as number;
}

function startTime(pid: number): string {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] as string;
}

/** Writes a record for `pgid` whose supervisor is long dead, so the sweep would kill the group. */
function plant(pgid: number, opts: { uid?: number; mode?: number; symlink?: boolean } = {}): string {
  const file = path.join(runDir, `${pgid}.json`);
  const rec = { serverId: 'planted', pgid, leaderStart: startTime(pgid), supervisorPid: 4_000_000, supervisorStart: '1', startedAt: new Date().toISOString() };
  if (opts.symlink) {
    const target = path.join(home, `target-${pgid}.json`);
    fs.writeFileSync(target, JSON.stringify(rec) + '\n', { mode: 0o600 });
    fs.symlinkSync(target, file);
    return file;
  }
  fs.writeFileSync(file, JSON.stringify(rec) + '\n', { mode: 0o600 });
  if (opts.mode !== undefined) fs.chmodSync(file, opts.mode);
  if (opts.uid !== undefined) fs.chownSync(file, opts.uid, opts.uid);
  return file;
}

async function runBasic(): Promise<RawSession> {
  const s = new RawSession(home, 'basic');
  s.send(INITIALIZE + '\n');
  await s.until(() => s.lines().length >= 1 || s.proc.exitCode !== null, 'first line or exit');
  s.close();
  await s.exited;
  return s;
}

beforeAll(() => {
  home = tempDir();
  runDir = path.join(home, 'run');
  addServer(home, 'basic', [process.execPath, path.join(SERVERS, 'basic.mjs')]);
});
afterEach(() => {
  for (const v of victims.splice(0)) v.kill('SIGKILL');
  fs.chmodSync(runDir, 0o700);
  for (const n of fs.readdirSync(runDir)) fs.rmSync(path.join(runDir, n), { force: true });
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

describe('records under run/', () => {
  it('a valid record of a dead supervisor is still swept (control)', async () => {
    const pid = victim();
    plant(pid);
    await runBasic();
    expect(alive(pid)).toBe(false);
  });

  it('a world-writable run/ is refused: nothing is killed, the session does not start, and it says how to fix it', async () => {
    const pid = victim();
    plant(pid, { uid: 65534, mode: 0o666 });
    fs.chmodSync(runDir, 0o777);
    const s = await runBasic();
    expect(alive(pid)).toBe(true);
    expect((await s.exited).code).not.toBe(0);
    expect(s.stderr).toContain(runDir);
    expect(s.stderr).toContain('chmod');
    expect(auditEvents(home).find((e) => e.event === 'run_record_refused' && e.file === runDir)).toBeDefined();
  });

  for (const [what, opts] of [
    ['owned by another user', { uid: 65534 }],
    ['writable by group and others', { mode: 0o666 }],
    ['that is a symbolic link', { symlink: true }],
  ] as const) {
    it(`a record ${what} is skipped loudly and never acted on`, async () => {
      const pid = victim();
      const file = plant(pid, opts);
      const s = await runBasic();
      expect(alive(pid)).toBe(true);
      expect((await s.exited).code).toBe(0);
      expect(s.stderr).toContain(file);
      const ev = auditEvents(home).filter((e) => e.event === 'run_record_refused' && e.file === file).pop();
      expect(ev?.reason).toEqual(expect.any(String));
    });
  }
});
