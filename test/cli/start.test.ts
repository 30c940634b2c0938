import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ROOT, alive, auditEvents, cli, tempDir } from '../helpers/warden.js';

// `npm start` on the embedded default: the checkout's allowlist.json must match what `npm ci` installed, and
// the machine's node is enrolled as trust-on-first-use, loudly, once.

const home = tempDir();
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

/** How long `npm start` may take to reach its daemon: digesting server-everything's tree, locking its surface
 *  and a client session come first. Below the tests' own timeout, so a hang fails with what was said. */
const READY_MS = 45_000;
const TEST_MS = 60_000;

// `npm start` runs the daemon as its child. Each run is started in a process group of its own, so whatever is
// left of it after a failure (the daemon included) is ended here, not leaked to the next test or the machine.
const started = new Set<ChildProcess>();
afterEach(async () => {
  for (const child of started) {
    const pgid = child.pid as number;
    const gone = (): boolean => child.exitCode !== null || child.signalCode !== null;
    if (!gone()) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM'); // passed on to the daemon, as a Ctrl-C would be
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    }
    try {
      process.kill(-pgid, 'SIGKILL'); // anything of the group still there
    } catch {
      // the group is gone
    }
  }
  started.clear();
});

/** The pids in process group `pgid` (from /proc), the leader excluded. */
function groupMembers(pgid: number): number[] {
  return fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => {
    if (pid === pgid) return false;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid && alive(pid);
    } catch {
      return false;
    }
  });
}

/** Runs `npm start`'s script until its daemon says where metrics are, then stops it with SIGTERM and checks
 *  that the daemon went with it. */
async function start(): Promise<{ code: number | null; stdout: string; stderr: string; leftover: number[] }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/cli/start.js')], { env: { ...process.env, MCP_WARDEN_HOME: home, MCP_WARDEN_LISTEN: '127.0.0.1:0' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  started.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  const ready = await new Promise<boolean>((resolve) => {
    const t = setTimeout(() => resolve(false), READY_MS);
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (/metrics at http:\/\/127\.0\.0\.1:\d+\/metrics/.test(stderr)) {
        clearTimeout(t);
        resolve(true);
      }
    });
    void exited.then(() => (clearTimeout(t), resolve(false)));
  });
  if (!ready) throw new Error(`npm start did not reach its daemon within ${READY_MS} ms (exit ${child.exitCode})\nstdout: ${stdout}\nstderr: ${stderr}`);
  child.kill('SIGTERM');
  const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 10_000))]);
  if (code === 'hung') throw new Error(`npm start did not exit within 10 s of SIGTERM\nstderr: ${stderr}`);
  return { code, stdout, stderr, leftover: groupMembers(child.pid as number) };
}

describe('npm start', () => {
  it('supervises server-everything with no hand edits, enrolling node as trust-on-first-use, then runs the daemon', async () => {
    const r = await start();
    expect(r.stderr).not.toMatch(/refused/);
    expect(r.stderr).toMatch(/metrics at http:\/\/127\.0\.0\.1:\d+\/metrics, status at/);
    expect(r.code).toBe(0);
    expect(r.leftover).toEqual([]);
    expect(r.stdout).toContain('TRUST ON FIRST USE');
    expect(r.stdout).toContain('echo answered: [{"type":"text","text":"Echo: hello through mcp-warden"}]');
    const tofu = auditEvents(home).find((e) => e.event === 'allowlist_changed');
    expect(tofu).toMatchObject({ trustOnFirstUse: true, kind: 'executable' });
    const entries = (JSON.parse(cli(home, ['allowlist', 'list', '--json']).stdout) as { entries: { kind: string; trustOnFirstUse?: boolean }[] }).entries;
    expect(entries.map((e) => [e.kind, e.trustOnFirstUse === true]).sort()).toEqual([['executable', true], ['package', false], ['script', false]]);
  }, TEST_MS);

  it('does not enroll anything the second time', async () => {
    const r = await start();
    expect(r.code).toBe(0);
    expect(r.leftover).toEqual([]);
    expect(r.stdout).not.toContain('TRUST ON FIRST USE');
    expect(auditEvents(home).filter((e) => e.event === 'allowlist_changed')).toHaveLength(1);
    expect(cli(home, ['audit', 'verify']).code).toBe(0);
  }, TEST_MS);
});
