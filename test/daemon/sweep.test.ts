import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, RawSession, SERVERS, WARDEN, addServer, alive, auditEvents, tempDir } from '../helpers/warden.js';

// The daemon sweeps orphaned sessions at start (docs/operations.md, "The daemon"): a `run` SIGKILLed while no
// daemon ran left its server's group behind, and no connection of it will ever drop for the daemon to notice.
// The every-minute schedule is test/daemon/sweeper.test.ts, on a fake clock.

let dir: string;
let home: string;
let grandchild: number | undefined;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  // Enrolled unarmed, then armed (ARMED_BY, test/servers/grandchild.mjs): add's launches end without the warden's
  // SIGTERM wait for a grandchild; the test's session has one, as before.
  addServer(home, 'grandchild', [process.execPath, path.join(SERVERS, 'grandchild.mjs')], ['--env', `GRANDCHILD_PID_FILE=${path.join(dir, 'grandchild.pid')}`, '--env', `ARMED_BY=${path.join(dir, 'armed')}`]);
  fs.writeFileSync(path.join(dir, 'armed'), '');
});
afterAll(() => {
  if (grandchild !== undefined && alive(grandchild)) process.kill(grandchild, 'SIGKILL'); // it ignores SIGTERM
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the daemon at start', () => {
  it('sweeps the group of a run SIGKILLed while no daemon ran, before it says it is ready', async () => {
    const s = new RawSession(home, 'grandchild');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    grandchild = Number(fs.readFileSync(path.join(dir, 'grandchild.pid'), 'utf8'));
    const [record] = fs.readdirSync(path.join(home, 'run')).filter((n) => n.endsWith('.json'));
    const pgid = Number(record?.replace('.json', ''));
    s.proc.kill('SIGKILL');
    await s.exited;
    expect(alive(grandchild)).toBe(true); // left behind (the server itself ends at its stdin EOF; what it started does not)

    const daemon = spawn(process.execPath, [WARDEN, '--home', home, 'daemon', '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    try {
      const deadline = Date.now() + 20_000;
      while (!/watching \d+ directories/.test(stderr)) {
        if (Date.now() > deadline || daemon.exitCode !== null) throw new Error(`the daemon did not get ready: ${stderr}`);
        await new Promise((r) => {
          const t = setTimeout(r, Math.max(0, deadline - Date.now()));
          daemon.stderr.once('data', (d: Buffer) => (clearTimeout(t), r((stderr += d.toString()))));
        });
      }
      // Ready means swept: the sweep at start is awaited, its audit lines included.
      expect(stderr.indexOf(`killed process group ${pgid} of server 'grandchild'`)).toBeGreaterThanOrEqual(0);
      expect(stderr.indexOf(`killed process group ${pgid}`)).toBeLessThan(stderr.search(/watching \d+ directories/));
      expect(auditEvents(home).find((e) => e.event === 'orphan_killed' && e.pgid === pgid)).toMatchObject({ server: 'grandchild', gone: true, pids: expect.arrayContaining([grandchild]) });
      expect(alive(pgid)).toBe(false);
      expect(alive(grandchild)).toBe(false);
      expect(fs.existsSync(path.join(home, 'run', `${pgid}.json`))).toBe(false);
    } finally {
      daemon.kill('SIGTERM');
      await new Promise((r) => (daemon.exitCode !== null ? r(null) : daemon.once('exit', r)));
    }
  }, 60_000);
});
