import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callsOnOneSession, enrollProbe, probeDir, requireBwrap } from '../helpers/probe-home.js';
import { NODE, ROOT, auditEvents, cli, connectClient, launchCount, sessionLaunch } from '../helpers/warden.js';

// Decoys (src/sandbox/decoys.ts, docs/adr/0064-seeing-file-denials.md): inside a confined server's hidden home the
// warden binds empty files of its own at a fixed list of secret paths; a read of one is a `sandbox_denied` event of
// kind read. The hostile test/servers/sandbox-probe.mjs reads the user's ~/.ssh/id_rsa as a stolen-key server would.
// The probe's home comes from the same run template as test/sandbox/confinement.test.ts (one `add` a run).

beforeAll(requireBwrap);

let dir: string;
let home: string;
let user: string;
let env: Record<string, string>;

beforeEach(() => {
  const p = probeDir('warden-decoy-');
  ({ dir, home, user, env } = p);
  fs.mkdirSync(path.join(user, '.aws'));
  fs.writeFileSync(path.join(user, '.aws/credentials'), '[default]\n');
  enrollProbe(p);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const warden = (...args: string[]) => cli(home, args, { env });
const denials = () => auditEvents(home).filter((e) => e.event === 'sandbox_denied' && e.server === 'probe');

/** Calls on one session; `during` runs while it is still open. */
const session = (calls: [string, Record<string, unknown>][], during?: () => Promise<void>) => callsOnOneSession(() => connectClient(home, 'probe', env), calls, during);

/** Resolves once `cond` holds, checked on each audit append (bounded: fails after `ms`). */
async function until(cond: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`not seen within ${ms} ms`);
    await new Promise<void>((r) => {
      const w = fs.watch(path.join(home, 'audit.log'), () => (w.close(), r()));
      setTimeout(() => (w.close(), r()), 100);
    });
  }
}

describe('decoys in a confined server\'s home', () => {
  it('a read of ~/.ssh/id_rsa gets an empty file, never the key, is recorded while the session runs as sandbox_denied kind read with the path, and cannot be hidden (write, re-time, chmod, O_NOATIME refused)', async () => {
    expect(warden('sandbox', 'probe', '--network', 'none').code).toBe(0);
    const key = path.join(user, '.ssh/id_rsa');
    const after = launchCount(home);
    const { out: [read, write, hide], stderr } = await session([['read', { path: key }], ['write', { path: key }], ['hide', { path: key }]], () => until(() => denials().length > 0, 5000));
    expect(read).toBe('ok: 0 bytes');
    expect(write).toBe('denied: EACCES');
    expect(hide).toBe('utimes: EPERM, chmod: EPERM, noatime: EPERM'); // it cannot hide the read it made
    expect(fs.readFileSync(key, 'utf8')).toBe('PRIVATE KEY\n');
    const events = denials().filter((e) => e.kind === 'read');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: 'read', path: key, reason: 'decoy' });
    // A root warden also sees its attempts on the decoy through bpftrace (docs/adr/0066): the write, the re-time
    // and the chmod the kernel refused (the O_NOATIME open is a read).
    expect(denials().filter((e) => e.kind === 'write').map((e) => [e.path, e.call, e.errno])).toEqual([[key, 'openat', 'EACCES'], [key, 'utimensat', 'EPERM'], [key, 'chmod', 'EPERM']]);
    expect(JSON.stringify(events[0])).not.toMatch(/PRIVATE/);
    expect(stderr).toContain(`mcp-warden ALERT sandbox_denied server=probe kind=read path=${key} reason=decoy`);
    const status = warden('status', 'probe', '--json');
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).servers[0].sandbox.denied[0]).toMatchObject({ kind: 'read', path: key, reason: 'decoy' });
    expect(warden('status', 'probe').stdout).toContain(`read ${key} (decoy) at `);
    expect(fs.readdirSync(path.join(home, 'decoys'))).toEqual([]); // removed with the session
    expect(await sessionLaunch(home, { after })).toMatchObject({ decision: 'allow', sandbox: { state: 'confined', decoys: 10 } });
  });

  it('a path the operator granted is never a decoy: the real file shows and its read is not recorded', async () => {
    expect(warden('sandbox', 'probe', '--network', 'none', '--allow-read', path.join(user, '.aws')).code).toBe(0);
    const after = launchCount(home);
    const { out: [aws, netrc] } = await session([['read', { path: path.join(user, '.aws/credentials') }], ['read', { path: path.join(user, '.netrc') }]]);
    expect(aws).toBe('ok: 10 bytes');
    expect(netrc).toBe('ok: 0 bytes');
    expect(denials().map((e) => e.path)).toEqual([path.join(user, '.netrc')]);
    expect(await sessionLaunch(home, { after })).toMatchObject({ decision: 'allow', sandbox: { state: 'confined', decoys: 9 } });
  });

  it('a warden that is not root places none (its server would own them): the reason doctor prints', () => {
    const nobody = spawnSync('setpriv', ['--reuid', '65534', '--regid', '65534', '--clear-groups', NODE, '--input-type=module', '-e', `import { decoysUnavailable } from ${JSON.stringify(path.join(ROOT, 'dist/sandbox/decoys.js'))}; console.log(decoysUnavailable('/nonexistent/home', false))`], { encoding: 'utf8' });
    expect(nobody.stderr).toBe('');
    expect(nobody.stdout).toMatch(/^the warden is not root: a decoy would be owned by the server/);
  });
});
