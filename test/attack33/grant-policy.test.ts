import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pinByHand } from '../helpers/pin-by-hand.js';
import { addServerWarm } from '../helpers/warm-digest.js';
import { NODE, ROOT, SERVERS, auditEvents, cli, tempDir } from '../helpers/warden.js';

// What no grant may reach (src/sandbox/grant-policy.ts; ADR 0050, addendum of issue 26): the kernel's views
// (/proc shows every other server's /proc/PID/environ), and for a write grant what the warden, root or the
// kernel run programs from (a program a confined server writes is owned by the warden's uid, so an ownership
// check cannot tell it from a real one), and a grant nested inside a write grant of any server (whose way that
// server could swap between the check and the mount). Refused when set (SANDBOX_INVALID, nothing changed) and
// again at launch, for a sandbox pinned by an earlier version or by hand (SANDBOX_UNAVAILABLE, nothing runs).

let dir: string;
let home: string;
let bin: string;
let shared: string;
const sandboxOf = (id: string): unknown => JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).servers[id].sandbox;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  bin = path.join(dir, 'tools/bin');
  shared = path.join(dir, 'area/shared');
  fs.mkdirSync(bin, { recursive: true });
  fs.mkdirSync(path.join(shared, 'sub'), { recursive: true });
  for (const id of ['a', 'b']) addServerWarm(home, id, [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]);
  const file = path.join(home, 'servers.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8'));
  config.path = `${bin}:${config.path}`;
  fs.writeFileSync(file, JSON.stringify(config, null, 2));
  const set = cli(home, ['sandbox', 'a', '--network', 'none', '--allow-write', shared]);
  expect(set.code, set.stderr).toBe(0);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a grant no server may hold, when it is set', () => {
  it.each([
    ['--allow-read', '/proc', /the grant \/proc reaches \/proc, the kernel's view/],
    ['--allow-read', '/sys/kernel', /the grant \/sys\/kernel reaches \/sys/],
    ['--allow-write', '/dev/shm', /the grant \/dev\/shm reaches \/dev/],
    ['--allow-write', '/usr/local/bin', /the write grant \/usr\/local\/bin is, holds or lies inside \/usr, a system directory/],
    ['--allow-write', '/etc', /the write grant \/etc is, holds or lies inside \/etc, a system directory/],
    ['--allow-write', '/opt', /the write grant \/opt is, holds or lies inside \/opt, a system directory/],
    ['--allow-write', 'TOOLS', /the write grant \S+\/tools is, holds or lies inside \S+\/tools\/bin, a directory of the trusted path/],
    ['--allow-write', 'INSTALL', /the write grant \S+ is, holds or lies inside \S+, the warden's own install/],
    ['--allow-write', 'HOME', /is, holds or lies inside the warden's home/],
    ['--allow-read', 'SHARED/sub', /the grant \S+\/shared\/sub lies inside \S+\/shared, a write grant of server 'a'/],
    ['--allow-write', 'DIR', /the write grant \S+\/area holds \S+\/area\/shared, a grant of server 'a'/],
  ])('%s %s is refused (SANDBOX_INVALID) and the sandbox is not changed', (flag, named, message) => {
    const grant = { TOOLS: path.dirname(bin), INSTALL: path.join(ROOT, 'dist'), HOME: path.join(home, 'data'), 'SHARED/sub': path.join(shared, 'sub'), DIR: path.dirname(shared) }[named] ?? named;
    const r = cli(home, ['sandbox', 'b', '--network', 'none', flag, grant]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/SANDBOX_INVALID: /);
    expect(r.stderr).toMatch(message);
    expect(sandboxOf('b')).toBeUndefined();
  });

  it('a write grant equal to another server\'s is shared, not nested: accepted', () => {
    const r = cli(home, ['sandbox', 'b', '--network', 'none', '--allow-write', shared]);
    expect(r.code, r.stderr).toBe(0);
    expect(cli(home, ['sandbox', 'b', '--clear']).code).toBe(0);
  });
});

describe('a grant no server may hold, pinned without the check (an earlier version, or by hand)', () => {
  it.each([
    ['a read grant of /proc', { read: { allow: ['/proc'], deny: [] }, write: [] }, /the grant \/proc reaches \/proc/],
    ['a write grant of /etc', { read: { allow: [], deny: [] }, write: ['/etc'] }, /the write grant \/etc is, holds or lies inside \/etc/],
    ["a read grant inside another server's write grant", { read: { allow: ['SHARED/sub'], deny: [] }, write: [] }, /lies inside \S+\/shared, a write grant of server 'a'/],
  ])('%s refuses the launch (SANDBOX_UNAVAILABLE), and nothing runs; `sandbox <id>` says it is not launchable, and why', async (_what, grants, message) => {
    const named = (l: string[]): string[] => l.map((p) => (p === 'SHARED/sub' ? path.join(shared, 'sub') : p));
    await pinByHand(home, 'b', { network: 'none', write: named(grants.write), read: { allow: named(grants.read.allow), deny: [] } });
    const view = JSON.parse(cli(home, ['sandbox', 'b', '--json']).stdout);
    expect(view).toMatchObject({ launchable: false, engine: { code: 'SANDBOX_UNAVAILABLE' } });
    expect(view.engine.message).toMatch(message);
    const r = cli(home, ['verify', 'b']);
    expect(r.code).toBe(3);
    expect(r.stderr + r.stdout).toMatch(/SANDBOX_UNAVAILABLE: /);
    expect(r.stderr + r.stdout).toMatch(message);
    expect(auditEvents(home).filter((e) => e.event === 'launch' && e.server === 'b').at(-1)).toMatchObject({ decision: 'refuse', code: 'SANDBOX_UNAVAILABLE' });
  });
});
