import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { nodeFor65534 } from '../helpers/host.js';
import { callsOnOneSession } from '../helpers/probe-home.js';
import { copyOfRunTemplate } from '../helpers/run-template.js';
import { NODE, SERVERS, WARDEN, auditEvents, cli, connectWarden } from '../helpers/warden.js';

// Denied writes of a confined node server, for a warden that is not root (src/launch/guard-denials.ts,
// src/launch/preload/fs-denials.ts, docs/adr/0068-denied-writes-reported-by-the-guard.md): no bpftrace, so the
// server's module guard reports the fs calls the kernel refused a write, as `sandbox_denied` kind write with
// `source: "guard"`. The warden runs as uid 65534 here (the suite runs as root; bwrap makes a user namespace), in
// a copy of test/sandbox/confinement.test.ts's run template given to that uid.

const PROBE = path.join(SERVERS, 'sandbox-probe.mjs');
beforeAll(() => {
  if (process.getuid?.() !== 0) throw new Error('these tests start the warden as uid 65534 and need root to do so (CI and this machine kind run as root)');
  if (!['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'].some((f) => fs.existsSync(f))) throw new Error('bubblewrap (bwrap) is missing on this host: apt-get install bubblewrap (README, "Test")');
});

let dir: string;
let home: string;
let env: Record<string, string>;
let node: string;

beforeEach(() => {
  dir = fs.mkdtempSync('/var/tmp/warden-guard-denials-');
  fs.chmodSync(dir, 0o711);
  home = path.join(dir, 'home');
  const user = path.join(dir, 'user');
  fs.mkdirSync(user);
  env = { ...(process.env as Record<string, string>), HOME: user };
  copyOfRunTemplate(`confinement: add probe ${NODE} ${PROBE}`, (d) => {
    const add = cli(path.join(d, 'home'), ['add', 'probe', '--yes', '--', NODE, PROBE], { env });
    expect(add.code, add.stderr).toBe(0);
  }, dir);
  expect(cli(home, ['sandbox', 'probe', '--network', 'none'], { env }).code).toBe(0);
  execFileSync('chown', ['-R', '65534:65534', home, user]);
  node = nodeFor65534(dir);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const AS_NOBODY = ['/usr/bin/setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups'];
const denials = () => auditEvents(home).filter((e) => e.event === 'sandbox_denied' && e.server === 'probe');
const lastLaunch = () => auditEvents(home).filter((e) => e.event === 'launch' && e.server === 'probe').at(-1);
const asNobody = (...args: string[]) => {
  try {
    return { code: 0, stdout: execFileSync(AS_NOBODY[0] as string, [...AS_NOBODY.slice(1), node, WARDEN, '--home', home, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (err) {
    return { code: (err as { status: number }).status, stdout: String((err as { stdout: unknown }).stdout) };
  }
};

/** Calls on one session of the warden run as uid 65534; closed (its report read to the end) when this resolves. */
const session = (calls: [string, Record<string, unknown>][]) => callsOnOneSession(() => connectWarden([...AS_NOBODY, node, WARDEN], home, 'probe', env), calls);

describe('denied writes of a confined node server under a warden that is not root, reported by its module guard', () => {
  it('writes to a read-only system path and outside the grants are sandbox_denied kind write, source guard, with the path and errno; one in the data directory is none; a path with a newline and controls is shown escaped; launch, status and doctor say who saw them', async () => {
    const outside = path.join(dir, 'outside.txt'); // /var/tmp: read-only inside the sandbox, not granted
    const forged = '/usr/evil\n{"denied":{"call":"open","errno":"EROFS","path":"x"}}\u001b[31m';
    const { out, stderr } = await session([['write', { path: '/usr/evil' }], ['write', { path: outside }], ['write', { path: 'in-data-dir.txt' }], ['write', { path: forged }]]);
    expect(out).toEqual(['denied: EROFS', 'denied: EROFS', 'ok: written', 'denied: EROFS']);
    expect(fs.existsSync(outside)).toBe(false);
    expect(denials().map(({ kind, path: p, call, errno, source }) => ({ kind, path: p, call, errno, source }))).toEqual([
      { kind: 'write', path: '/usr/evil', call: 'open', errno: 'EROFS', source: 'guard' },
      { kind: 'write', path: outside, call: 'open', errno: 'EROFS', source: 'guard' },
      { kind: 'write', path: forged, call: 'open', errno: 'EROFS', source: 'guard' },
    ]);
    expect(stderr).toContain('mcp-warden ALERT sandbox_denied server=probe kind=write path=/usr/evil call=open errno=EROFS');
    expect(stderr).toContain('(reported by its own node: the module guard)');
    expect(stderr).toContain('\\u001b[31m');
    expect(stderr).not.toContain('\u001b[31m');
    expect(lastLaunch()).toMatchObject({ decision: 'allow', sandbox: { state: 'confined', writes: 'guard', writesWhy: 'the warden is not root (bpftrace needs CAP_BPF and CAP_PERFMON)' } });
    const status = asNobody('status', 'probe', '--json');
    expect(status.code).toBe(0);
    const sandbox = JSON.parse(status.stdout).servers[0].sandbox;
    expect(sandbox.denied[0]).toMatchObject({ kind: 'write', path: forged, call: 'open', errno: 'EROFS', source: 'guard' });
    expect(sandbox.writes).toEqual({ observed: false, why: 'the warden is not root (bpftrace needs CAP_BPF and CAP_PERFMON)', byGuard: true });
    expect(asNobody('status', 'probe').stdout).toContain('reported by its module guard');
    const doctor = JSON.parse(asNobody('doctor', '--json').stdout);
    expect(doctor.writes).toMatchObject({ observed: false, guard: true });
    expect(doctor.decoys).toMatchObject({ placed: false });
    expect(asNobody('doctor').stdout).toContain('their module guard reports their reads of those paths instead of decoys');
  });

  it('a read of a listed secret path of the hidden home (no decoy: not root) is sandbox_denied kind read, reason guard, once per read, with that path; a read of another hidden file is none', async () => {
    const user = env.HOME as string;
    const { out, stderr } = await session([['read', { path: path.join(user, '.ssh/id_rsa') }], ['read', { path: path.join(user, '.ssh/known_hosts') }], ['read', { path: `${user}/./.aws/../.aws/credentials` }]]);
    expect(out).toEqual(['denied: ENOENT', 'denied: ENOENT', 'denied: ENOENT']);
    expect(denials().map(({ kind, path: p, reason }) => ({ kind, path: p, reason }))).toEqual([
      { kind: 'read', path: path.join(user, '.ssh/id_rsa'), reason: 'guard' },
      { kind: 'read', path: path.join(user, '.aws/credentials'), reason: 'guard' },
    ]);
    expect(lastLaunch()).toMatchObject({ sandbox: { state: 'confined', decoys: 0, writes: 'guard' } });
    expect(stderr).toContain('as its own node reported it (the module guard)');
  });

  it('a server writing in a loop is recorded 64 times, then once reports_capped', async () => {
    const { out } = await session([['write', { path: '/usr/loop', times: 200 }], ['whoami', {}]]);
    expect(out[0]).toBe('denied: EROFS');
    expect(denials()).toHaveLength(64);
    expect(auditEvents(home).filter((e) => e.event === 'reports_capped' && e.server === 'probe')).toEqual([expect.objectContaining({ report: 'sandbox_denied', cap: 64 })]);
  });
});
