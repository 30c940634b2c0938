import { spawn, spawnSync, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireHost } from '../helpers/host.js';
import { NODE, SERVERS, WARDEN, addServer, tempDir } from '../helpers/warden.js';

// sd_notify as systemd sees it: datagrams on $NOTIFY_SOCKET from the daemon's own pid (what NotifyAccess=main
// accepts), READY=1 once it serves, WATCHDOG=1 at half the interval, RELOADING/READY around SIGHUP, STOPPING on
// SIGTERM, and no NOTIFY_SOCKET or WATCHDOG_* in anything it launches.

interface Datagram {
  pid: number;
  data: string;
  /** When the receiver took it off the socket (its monotonic clock, seconds). */
  t: number;
}

/** The watchdog interval the daemon is given (WATCHDOG_USEC), in ms. */
const WATCHDOG_MS = 400;

let dir: string;
let home: string;
let receiver: ChildProcess | undefined;
let receiverReady = false;
let daemon: ChildProcessWithoutNullStreams | undefined;
let stderr = '';
const datagrams: Datagram[] = [];
const waiters: (() => void)[] = [];
const envFile = (): string => path.join(dir, 'env.json');

async function until<T>(find: () => T | undefined, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\ndatagrams: ${JSON.stringify(datagrams)}\nstderr: ${stderr}`);
    await new Promise<void>((r) => {
      const t = setTimeout(r, Math.max(0, deadline - Date.now()));
      waiters.push(() => (clearTimeout(t), r()));
    });
  }
}
const wake = (): void => void waiters.splice(0).forEach((w) => w());
const after = (i: number, state: string): number | undefined => {
  const j = datagrams.findIndex((d, k) => k >= i && d.data.split('\n').includes(state));
  return j < 0 ? undefined : j;
};

beforeAll(async () => {
  requireHost('python3', 'unix-dgram');
  dir = tempDir();
  home = path.join(dir, 'home');
  addServer(home, 'basic', [NODE, path.join(SERVERS, 'basic.mjs')], ['--env', `ENV_NAMES_FILE=${envFile()}`, '--env', 'NOTIFY_SOCKET', '--env', 'WATCHDOG_USEC', '--env', 'WATCHDOG_PID']);
  fs.rmSync(envFile(), { force: true });
  const servers = JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8'));
  servers.servers.basic.verifyEvery = 1;
  fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify(servers));

  const socketPath = path.join(dir, 'notify.sock');
  receiver = spawn('python3', [path.join(import.meta.dirname, '../helpers/notify-receiver.py'), socketPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  receiver.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
      const msg = JSON.parse(out.slice(0, nl)) as Datagram & { ready?: string };
      out = out.slice(nl + 1);
      if (msg.ready) receiverReady = true;
      else datagrams.push(msg);
      wake();
    }
  });
  // Its ready line, not the socket file: the file exists before the socket passes the sender's credentials.
  await until(() => (receiverReady ? true : undefined), "the receiver's ready line");

  const d = spawn(process.execPath, [WARDEN, '--home', home, 'daemon', '--listen', '127.0.0.1:0'], { env: { ...process.env, NOTIFY_SOCKET: socketPath, WATCHDOG_USEC: String(WATCHDOG_MS * 1000) }, stdio: ['pipe', 'pipe', 'pipe'] });
  daemon = d;
  d.stderr.on('data', (b: Buffer) => ((stderr += b.toString()), wake()));
});
afterAll(async () => {
  const d = daemon;
  if (d && d.exitCode === null && d.signalCode === null) {
    const exited = new Promise((r) => d.once('exit', r));
    d.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (d.exitCode === null && d.signalCode === null) d.kill('SIGKILL');
  }
  receiver?.kill();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The daemon, once beforeAll started it. */
function theDaemon(): ChildProcessWithoutNullStreams {
  if (!daemon) throw new Error('the daemon was not started');
  return daemon;
}

describe('the daemon under systemd (sd_notify)', () => {
  it('says READY=1 from its own pid once /status answers', async () => {
    const i = await until(() => after(0, 'READY=1'), 'READY=1');
    expect(datagrams[i]?.pid).toBe(theDaemon().pid);
    expect(datagrams[i]?.data).toMatch(/^STATUS=watching \d+ directories for 1 server\(s\)$/m);
    const base = /metrics at (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(stderr)?.[1];
    const status = (await (await fetch(`${base}/status`)).json()) as { pid: number };
    expect(status.pid).toBe(theDaemon().pid);
  });

  it('pings the watchdog at half the interval systemd gave it', async () => {
    const pings = (): Datagram[] => datagrams.filter((d) => d.data === 'WATCHDOG=1');
    await until(() => (pings().length >= 9 ? true : undefined), 'nine WATCHDOG=1 pings');
    expect(pings().every((d) => d.pid === theDaemon().pid)).toBe(true);
    // Spacing relative to the interval, by its median (one ping delayed by a busy machine moves it little):
    // half the interval is 0.5; timers never fire early, so below 0.4 means too often, and from 0.9 on it is
    // pinging at about the full interval, which systemd would take for a hang at the first delay.
    const ts = pings().slice(0, 9).map((d) => d.t * 1000);
    const spacing = ts.slice(1).map((t, i) => t - (ts[i] as number)).sort((a, b) => a - b);
    const ratio = (spacing[Math.floor(spacing.length / 2)] as number) / WATCHDOG_MS;
    expect(ratio, `spacings ${spacing.map((s) => s.toFixed(0)).join(', ')} ms, interval ${WATCHDOG_MS} ms`).toBeGreaterThan(0.4);
    expect(ratio, `spacings ${spacing.map((s) => s.toFixed(0)).join(', ')} ms, interval ${WATCHDOG_MS} ms`).toBeLessThan(0.9);
  });

  it('launches servers without NOTIFY_SOCKET or WATCHDOG_*, even when servers.json passes them by name', async () => {
    const names = await until(() => (fs.existsSync(envFile()) ? (JSON.parse(fs.readFileSync(envFile(), 'utf8')) as string[]) : undefined), 'a scheduled launch of the server', 15_000);
    expect(names).toContain('ENV_NAMES_FILE');
    expect(names.filter((n) => n === 'NOTIFY_SOCKET' || n.startsWith('WATCHDOG_'))).toEqual([]);
  });

  it('says RELOADING=1 then READY=1 around a SIGHUP reload', async () => {
    const from = datagrams.length;
    theDaemon().kill('SIGHUP');
    const reloading = await until(() => after(from, 'RELOADING=1'), 'RELOADING=1');
    expect(datagrams[reloading]?.data).toMatch(/^MONOTONIC_USEC=\d+$/m);
    await until(() => after(reloading + 1, 'READY=1'), 'READY=1 after the reload');
  });

  it('says STOPPING=1 on SIGTERM and exits 0', async () => {
    const from = datagrams.length;
    const d = theDaemon();
    const exited = new Promise<number | null>((r) => d.once('exit', (code) => r(code)));
    d.kill('SIGTERM');
    await until(() => after(from, 'STOPPING=1'), 'STOPPING=1');
    expect(await exited).toBe(0);
  });

  it('refuses an abstract NOTIFY_SOCKET address it cannot send to, saying what to do', () => {
    const r = spawnSync(process.execPath, [WARDEN, '--home', home, 'daemon', '--listen', '127.0.0.1:0'], { env: { ...process.env, NOTIFY_SOCKET: '@warden-test' }, encoding: 'utf8', timeout: 10_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/NOTIFY_SOCKET=@warden-test is not a filesystem socket path.*Type=exec/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
