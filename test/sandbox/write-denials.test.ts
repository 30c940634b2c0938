import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callsOnOneSession } from '../helpers/probe-home.js';
import { copyOfRunTemplate } from '../helpers/run-template.js';
import { firstOnTrustedPath } from '../helpers/trusted-path.js';
import { NODE, SERVERS, auditEvents, cli, connectClient } from '../helpers/warden.js';

// Denied writes seen through bpftrace (src/sandbox/write-trace.ts, docs/adr/0066-denied-writes-through-bpftrace.md):
// a root warden traces each confined session's cgroup, and a write-intent call the kernel refuses (EROFS, EACCES,
// EPERM) is a `sandbox_denied` event of kind write with the path as the server gave it. Root only, as the decoy
// tests (the suite runs as root); bpftrace comes from .ci/run's TOOLS. The probe's home is the run template of
// test/sandbox/confinement.test.ts (one `add` a run).

const PROBE = path.join(SERVERS, 'sandbox-probe.mjs');
beforeAll(() => {
  if (!['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'].some((f) => fs.existsSync(f))) throw new Error('bubblewrap (bwrap) is missing on this host: apt-get install bubblewrap (README, "Test")');
  if (!['/usr/bin/bpftrace', '/usr/local/bin/bpftrace'].some((f) => fs.existsSync(f))) throw new Error('bpftrace is missing on this host: apt-get install bpftrace (docs/testing.md)');
  if (!fs.existsSync('/sys/kernel/tracing/events/raw_syscalls') && !fs.existsSync('/sys/kernel/debug/tracing/events/raw_syscalls')) throw new Error('tracefs is not mounted: mount -t tracefs nodev /sys/kernel/tracing (docs/testing.md)');
});

let dir: string;
let home: string;
let env: Record<string, string>;

beforeEach(() => {
  dir = fs.mkdtempSync('/var/tmp/warden-writes-');
  home = path.join(dir, 'home');
  const user = path.join(dir, 'user');
  fs.mkdirSync(user);
  env = { ...(process.env as Record<string, string>), HOME: user };
  copyOfRunTemplate(`confinement: add probe ${NODE} ${PROBE}`, (d) => {
    const add = cli(path.join(d, 'home'), ['add', 'probe', '--yes', '--', NODE, PROBE], { env });
    expect(add.code, add.stderr).toBe(0);
  }, dir);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const warden = (...args: string[]) => cli(home, args, { env });
const denials = () => auditEvents(home).filter((e) => e.event === 'sandbox_denied' && e.server === 'probe');
const lastLaunch = () => auditEvents(home).filter((e) => e.event === 'launch' && e.server === 'probe').at(-1);

/** Calls on one session; the session is closed (its tracer read to the end) when this resolves. */
const session = (calls: [string, Record<string, unknown>][]) => callsOnOneSession(() => connectClient(home, 'probe', env), calls);

describe('denied writes of a confined server, seen through bpftrace', () => {
  it('writes to a read-only system path and outside the grant are sandbox_denied kind write with the path and errno; a write in the data directory is none; a path with a newline and controls is one event, shown escaped', async () => {
    expect(warden('sandbox', 'probe', '--network', 'none').code).toBe(0);
    const outside = path.join(dir, 'outside.txt'); // /var/tmp: read-only inside the sandbox, not granted
    const forged = '/usr/evil\nW 257 30 forged\u001b[31m';
    const { out, stderr } = await session([['write', { path: '/usr/evil' }], ['write', { path: outside }], ['write', { path: 'in-data-dir.txt' }], ['write', { path: forged }]]);
    expect(out).toEqual(['denied: EROFS', 'denied: EROFS', 'ok: written', 'denied: EROFS']);
    expect(fs.existsSync(outside)).toBe(false);
    expect(denials().map(({ kind, path: p, call, errno, truncated }) => ({ kind, path: p, call, errno, truncated }))).toEqual([
      { kind: 'write', path: '/usr/evil', call: 'openat', errno: 'EROFS', truncated: undefined },
      { kind: 'write', path: outside, call: 'openat', errno: 'EROFS', truncated: undefined },
      { kind: 'write', path: forged, call: 'openat', errno: 'EROFS', truncated: undefined },
    ]);
    expect(stderr).toContain('mcp-warden ALERT sandbox_denied server=probe kind=write path=/usr/evil call=openat errno=EROFS');
    expect(stderr).toContain('/usr/evil\\u000aW 257 30 forged\\u001b[31m');
    expect(stderr).not.toContain('\u001b[31m');
    expect(stderr.split('\n').filter((l) => l.startsWith('W 257'))).toEqual([]); // no line forged
    expect(lastLaunch()).toMatchObject({ decision: 'allow', sandbox: { state: 'confined', writes: 'observed' } });
    const status = warden('status', 'probe', '--json');
    expect(status.code, status.stderr).toBe(0);
    const sandbox = JSON.parse(status.stdout).servers[0].sandbox;
    expect(sandbox.denied[0]).toMatchObject({ kind: 'write', path: forged, call: 'openat', errno: 'EROFS' });
    expect(sandbox.writes).toEqual({ observed: true });
    expect(warden('status', 'probe').stdout).toContain('write /usr/evil\\u000aW 257 30 forged\\u001b[31m (openat EROFS) at ');
  });

  it('an honest session (no write outside its grants) records no denied write, with its writes observed', async () => {
    expect(warden('sandbox', 'probe', '--network', 'none').code).toBe(0);
    const { out } = await session([['whoami', {}], ['write', { path: '/tmp/scratch' }]]);
    expect(out[1]).toBe('ok: written');
    expect(lastLaunch()).toMatchObject({ decision: 'allow', sandbox: { state: 'confined', writes: 'observed' } });
    expect(denials()).toEqual([]);
    expect(auditEvents(home).filter((e) => e.event === 'sandbox_writes_unobserved')).toEqual([]);
  });

  it('a server writing in a loop is recorded 64 times, then once reports_capped, and its tracer is stopped (not reported as dead)', async () => {
    expect(warden('sandbox', 'probe', '--network', 'none').code).toBe(0);
    const { out } = await session([['write', { path: '/usr/loop', times: 200 }], ['whoami', {}]]);
    expect(out[0]).toBe('denied: EROFS');
    expect(denials()).toHaveLength(64);
    expect(denials().every((e) => e.kind === 'write' && e.path === '/usr/loop')).toBe(true);
    expect(auditEvents(home).filter((e) => e.event === 'reports_capped')).toMatchObject([{ server: 'probe', report: 'sandbox_denied', cap: 64 }]);
    expect(auditEvents(home).filter((e) => e.event === 'sandbox_writes_unobserved')).toEqual([]);
  });

  it('a tracer that cannot start, or stops during the session, is sandbox_writes_unobserved with its reason (an alert, status says so), and the session runs confined as before; one that cannot start leaves the denied writes to the node server\'s module guard', async () => {
    expect(warden('sandbox', 'probe', '--network', 'none').code).toBe(0);
    // A bpftrace of the operator's own on the trusted path (root-owned, not writable by others): it refuses, or
    // says it attached and ends at once.
    const bin = firstOnTrustedPath(home, dir, 'bpftrace', '#!/bin/sh\nif [ -e "${0%/*}/attach" ]; then echo READY; echo "ERROR: probe lost" >&2; exit 3; fi\necho "ERROR: Error loading program: bpf refused" >&2\nexit 1\n');

    const refused = await session([['write', { path: '/usr/evil' }]]);
    expect(refused.out).toEqual(['denied: EROFS']);
    // Not traced: the probe is a node server, whose module guard reports its denied fs calls (docs/adr/0068).
    expect(lastLaunch()).toMatchObject({ decision: 'allow', sandbox: { state: 'confined', writes: 'guard', writesWhy: 'bpftrace exited (1): ERROR: Error loading program: bpf refused' } });
    expect(auditEvents(home).filter((e) => e.event === 'sandbox_writes_unobserved')).toMatchObject([{ server: 'probe', when: 'start', why: 'bpftrace exited (1): ERROR: Error loading program: bpf refused' }]);
    expect(refused.stderr).toContain('mcp-warden ALERT sandbox_writes_unobserved server=probe when=start');
    expect(denials().map(({ path: p, call, errno, source }) => ({ path: p, call, errno, source }))).toEqual([{ path: '/usr/evil', call: 'open', errno: 'EROFS', source: 'guard' }]);
    expect(JSON.parse(warden('status', 'probe', '--json').stdout).servers[0].sandbox.writes).toEqual({ observed: false, why: 'bpftrace exited (1): ERROR: Error loading program: bpf refused', byGuard: true });

    fs.writeFileSync(path.join(bin, 'attach'), '');
    const died = await session([['whoami', {}], ['write', { path: '/usr/evil' }]]);
    expect(died.out[1]).toBe('denied: EROFS');
    // It said it attached, so the server was started; it ended before the launch was recorded, or after.
    expect(lastLaunch()).toMatchObject({ decision: 'allow', sandbox: { state: 'confined' } });
    expect(auditEvents(home).filter((e) => e.event === 'sandbox_writes_unobserved').at(-1)).toMatchObject({ server: 'probe', when: 'session', why: 'bpftrace exited (3): ERROR: probe lost' });
    expect(warden('status', 'probe').stdout).toContain('denied writes NOT observed in its last session: bpftrace exited (3): ERROR: probe lost');
  });

  it('with "writeTracing": "off" in servers.json no bpftrace is run, by a launch or by doctor: a denied write makes no event, the launch records writes off, status and doctor say off by servers.json', async () => {
    expect(warden('sandbox', 'probe', '--network', 'none').code).toBe(0);
    // A bpftrace first on the trusted path that leaves a mark when it runs (and would attach: READY, then waits).
    const bin = firstOnTrustedPath(home, dir, 'bpftrace', '#!/bin/sh\n: > "${0%/*}/ran"\necho READY\nexec sleep 30\n', { writeTracing: 'off' });
    const off = 'off by servers.json ("writeTracing": "off")';

    const { out, stderr } = await session([['write', { path: '/usr/evil' }]]);
    expect(out).toEqual(['denied: EROFS']);
    expect(lastLaunch()).toMatchObject({ decision: 'allow', sandbox: { state: 'confined', writes: 'off', writesWhy: off } });
    expect(denials()).toEqual([]);
    expect(auditEvents(home).filter((e) => e.event === 'sandbox_writes_unobserved')).toEqual([]);
    expect(stderr).not.toContain('sandbox_writes_unobserved');
    expect(JSON.parse(warden('status', 'probe', '--json').stdout).servers[0].sandbox.writes).toEqual({ observed: false, why: off });
    expect(warden('status', 'probe').stdout).toContain(`denied writes NOT observed in its last session: ${off}`);
    const doctor = warden('doctor');
    expect(doctor.stdout).toContain(`Writes:      denied writes are NOT observed (the sandbox still refuses them): ${off}`);
    expect(fs.existsSync(path.join(bin, 'ran'))).toBe(false);
  });
});
