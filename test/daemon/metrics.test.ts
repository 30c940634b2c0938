import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import parsePrometheus from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, WARDEN, addServer, alive, auditEvents as auditEventsOf, cli, tempDir } from '../helpers/warden.js';
import { basicHome } from '../helpers/run-template.js';

// The daemon's /metrics (parsed as Prometheus text) and /status, fed by the events of `run` sessions.

let dir: string;
let home: string;
let daemon: ChildProcessWithoutNullStreams;
let stderr = '';
let base = '';

beforeAll(async () => {
  dir = tempDir();
  home = path.join(dir, 'home');
  basicHome(home);
  // Enrolled unarmed, then armed (ARMED_BY, test/servers/grandchild.mjs): add's launches end without the warden's
  // SIGTERM wait for a grandchild; the test's session has one, as before.
  addServer(home, 'grandchild', [NODE, path.join(SERVERS, 'grandchild.mjs')], ['--env', `GRANDCHILD_PID_FILE=${path.join(dir, 'grandchild.pid')}`, '--env', `ARMED_BY=${path.join(dir, 'armed')}`]);
  fs.writeFileSync(path.join(dir, 'armed'), '');
  daemon = spawn(process.execPath, [WARDEN, '--home', home, 'daemon', '--listen', '127.0.0.1:0'], { stdio: ['pipe', 'pipe', 'pipe'] });
  daemon.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 10_000;
  while (!/watching \d+ directories/.test(stderr)) {
    if (Date.now() > deadline) throw new Error(`daemon not ready: ${stderr}`);
    await new Promise((r) => daemon.stderr.once('data', r));
  }
  base = /metrics at (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(stderr)?.[1] ?? '';
});
afterAll(async () => {
  daemon.kill('SIGTERM');
  await new Promise((r) => daemon.once('exit', r));
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Family {
  name: string;
  metrics: { labels?: Record<string, string>; value?: string; count?: string }[];
}

async function metrics(): Promise<Family[]> {
  return parsePrometheus(await (await fetch(`${base}/metrics`)).text()) as Family[];
}

function value(families: Family[], name: string, labels: Record<string, string>): number {
  const f = families.find((x) => x.name === name);
  const m = f?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  return Number(m?.value ?? 0);
}

describe('daemon metrics and status', () => {
  it('serves Prometheus text whose counters move with the sessions of run', async () => {
    const before = value(await metrics(), 'mcp_warden_launches_total', { server: 'basic', decision: 'allow' });
    const s = new RawSession(home, 'basic');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    s.close();
    await s.exited;
    const deadline = Date.now() + 5_000;
    let families = await metrics();
    while (value(families, 'mcp_warden_launches_total', { server: 'basic', decision: 'allow' }) <= before && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      families = await metrics();
    }
    expect(value(families, 'mcp_warden_launches_total', { server: 'basic', decision: 'allow' })).toBe(before + 1);
    expect(value(families, 'mcp_warden_canary_runs_total', { server: 'basic', probe: 'unknown-tool', result: 'pass' })).toBeGreaterThanOrEqual(1);
    expect(value(families, 'mcp_warden_last_verification_timestamp_seconds', { server: 'basic' })).toBeGreaterThan(Date.now() / 1000 - 60);
  });

  it('serves its status as JSON', async () => {
    const status = (await (await fetch(`${base}/status`)).json()) as { home: string; servers: Record<string, { attestation: { state: string } }> };
    expect(status.home).toBe(home);
    expect(status.servers.basic?.attestation.state).toBe('allowed');
  });

  it('answers mcp-warden status, which then shows what the daemon watches', async () => {
    const r = cli(home, ['status', '--json']);
    expect(r.code).toBe(0);
    const view = JSON.parse(r.stdout) as { daemon: { running: boolean; pid: number; metrics: string }; servers: { id: string; daemon?: { attestation: { state: string } } }[] };
    expect(view.daemon).toMatchObject({ running: true, pid: daemon.pid, metrics: `${base}/metrics` });
    expect(view.servers.find((x) => x.id === 'basic')?.daemon?.attestation.state).toBe('allowed');
    const human = cli(home, ['status', 'basic']);
    expect(human.stdout).toContain(`daemon    running (pid ${daemon.pid}`);
    expect(human.stdout).toMatch(/^ {2}watched {3}allowed since /m);
  });

  it('refuses to listen beyond loopback', () => {
    const r = cli(home, ['daemon', '--listen', '0.0.0.0:9464']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('expected a loopback HOST:PORT');
  });
});

describe('the daemon and dead supervisors', () => {
  it('sweeps the process group of a run that was SIGKILLed, as soon as its connection drops', async () => {
    const s = new RawSession(home, 'grandchild');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    const grandchild = Number(fs.readFileSync(path.join(dir, 'grandchild.pid'), 'utf8'));
    // The live group is the one recorded under run/ (the audit line of this launch may still be on its way).
    const records = fs.readdirSync(path.join(home, 'run')).filter((n) => n.endsWith('.json'));
    expect(records).toHaveLength(1);
    const pgid = Number((records[0] as string).replace('.json', ''));
    s.proc.kill('SIGKILL');
    await s.exited;
    // The audit line follows the stderr line: poll the log (bounded) for the event itself.
    const deadline = Date.now() + 10_000;
    while (!auditEventsOf(home).some((e) => e.event === 'orphan_killed' && e.pgid === pgid) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(auditEventsOf(home).find((e) => e.event === 'orphan_killed' && e.pgid === pgid), `no orphan_killed for group ${pgid}; daemon said:\n${stderr}`).toMatchObject({ server: 'grandchild', gone: true, pids: expect.arrayContaining([grandchild]) });
    expect(alive(grandchild)).toBe(false);
    expect(stderr).toContain(`killed process group ${pgid} of server 'grandchild'`);
    // The sweep is counted in /metrics once it is audited.
    while (value(await metrics(), 'mcp_warden_orphans_killed_total', { server: 'grandchild' }) < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(value(await metrics(), 'mcp_warden_orphans_killed_total', { server: 'grandchild' })).toBe(1);
  });
});
