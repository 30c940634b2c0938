import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addedHome } from '../helpers/run-template.js';
import { NODE, SERVERS, auditEvents, cli, connectClient, tempDir } from '../helpers/warden.js';
import { writeTracingOff } from '../helpers/write-tracing.js';

// review 12: `read.deny` hid a path by mounting over its name (an empty tmpfs, or /dev/null for a file) in the
// server's mount namespace. A mount over a name is not a property of the name: when the host replaces the file
// the usual way (write a temporary, rename it over: editors, secret rotation, `sed -i`), the kernel (since 3.18)
// detaches mounts that sat on the replaced dentry in every other namespace, and the running server read the new
// file; a deny path missing at launch had no mount at all. The first fix ended the session when a watch saw the
// name replaced (a read racing the watch still got the new file once). The construction now (issue 29,
// docs/adr/0050-sandbox-engine.md, addendum "read.deny without a race"): the deny path's directory is rebuilt
// inside the sandbox, an empty tmpfs with every other entry bound back from the descriptor it was checked
// through, so whatever the host later puts at the denied name, or beside it, is not in the sandbox at all.
// Asserts the reviewer's original claim: a read issued after the rename is denied, in the same session.
// The home sets servers.json's "writeTracing": "off": what is proven is what a read sees, never the report of
// denied writes (test/sandbox/write-denials*.test.ts), and bpftrace at each confined launch as root costs ~0.5 s.

let dir: string;
let home: string;
let projects: string;
let client: Client;

const call = async (name: string, args: Record<string, unknown>): Promise<string> =>
  ((await client.callTool({ name, arguments: args })) as { content: { text: string }[] }).content[0]?.text ?? '';

beforeAll(async () => {
  dir = tempDir();
  home = path.join(dir, 'home');
  projects = path.join(dir, 'projects');
  fs.mkdirSync(projects, { recursive: true });
  fs.writeFileSync(path.join(projects, '.env'), 'TOKEN=secret\n');
  fs.writeFileSync(path.join(projects, 'readme.txt'), 'hello\n');
  addedHome(home, 'probe', [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]); // one add a run, copied
  // later.env does not exist yet: `sandbox` accepts it (item 2 of issue 29: what is created there later is hidden).
  const set = cli(home, ['sandbox', 'probe', '--network', 'none', '--allow-read', projects, '--deny-read', path.join(projects, '.env'), '--deny-read', path.join(projects, 'later.env')]);
  expect(set.code, set.stderr).toBe(0);
  writeTracingOff(home);
  ({ client } = await connectClient(home, 'probe'));
});
afterAll(async () => {
  await client?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a read.deny path inside a read grant', () => {
  it('replaced by rename on the host stays unreadable in the same session: a read after the rename is denied, and the session goes on', async () => {
    const env = path.join(projects, '.env');
    expect(await call('read', { path: env })).toBe('denied: EACCES');
    // The host rotates the secret the way editors and tools write: a temporary file renamed over the old one.
    fs.writeFileSync(path.join(projects, '.env.tmp'), 'TOKEN=rotated-secret\n');
    fs.renameSync(path.join(projects, '.env.tmp'), env);
    expect(await call('read', { path: env })).toBe('denied: EACCES');
    // And again after an unlink and a new file.
    fs.rmSync(env);
    fs.writeFileSync(env, 'TOKEN=third-secret\n');
    expect(await call('read', { path: env })).toBe('denied: EACCES');
    expect(await call('read', { path: path.join(projects, 'readme.txt') })).toBe('ok: 6 bytes');
    expect(auditEvents(home).filter((e) => e.event === 'sandbox_deny_replaced')).toEqual([]);
  });

  it('missing at launch and created on the host later is not in the sandbox (ENOENT), though the launch was not refused', async () => {
    fs.writeFileSync(path.join(projects, 'later.env'), 'TOKEN=later\n');
    expect(await call('read', { path: path.join(projects, 'later.env') })).toBe('denied: ENOENT');
  });

  it('beside it, an entry the host creates after the launch is not visible either (the trade-off of rebuilding the directory), while the entries there at launch are', async () => {
    fs.writeFileSync(path.join(projects, 'new.txt'), 'new\n');
    expect(await call('read', { path: path.join(projects, 'new.txt') })).toBe('denied: ENOENT');
    expect(await call('read', { path: path.join(projects, 'readme.txt') })).toBe('ok: 6 bytes');
  });
});

describe('a read.deny path in a directory too large to rebuild', () => {
  it('is refused when set (SANDBOX_INVALID, exit 2) and, grown past the bound after, at launch (SANDBOX_UNAVAILABLE, exit 3), naming the directory and the bound', () => {
    const big = path.join(dir, 'big');
    fs.mkdirSync(big);
    for (let i = 0; i < 257; i++) fs.writeFileSync(path.join(big, `f${i}`), '');
    const set = ['sandbox', 'probe', '--clear', '--network', 'none', '--allow-read', big, '--deny-read', path.join(big, 'secret')];
    const refused = cli(home, set);
    expect(refused.stderr).toMatch(/SANDBOX_INVALID: /);
    expect(refused.stderr).toContain(`${big} holds 257 other entries, more than 256`);
    expect(refused.code).toBe(2);
    fs.rmSync(path.join(big, 'f256'));
    expect(cli(home, set).code).toBe(0);
    fs.writeFileSync(path.join(big, 'f256'), '');
    const r = cli(home, ['run', 'probe']);
    expect(r.stderr).toMatch(/SANDBOX_UNAVAILABLE: /);
    expect(r.stderr).toContain(`${big} holds 257 other entries`);
    expect(r.code).toBe(3);
  });
});

describe('a read.deny path that is also a grant', () => {
  it('is refused when set (SANDBOX_INVALID, exit 2) naming it: the grant would show what the deny hides', () => {
    const r = cli(home, ['sandbox', 'probe', '--clear', '--network', 'none', '--allow-read', projects, '--deny-read', projects]);
    expect(r.stderr).toMatch(/SANDBOX_INVALID: /);
    expect(r.stderr).toContain(`the read.deny path ${projects} is also granted`);
    expect(r.code).toBe(2);
  });
});

describe('a read.deny path in a grant mounted on a name of the host (outside the places the sandbox hides)', () => {
  it('stays denied when renamed over without ending the session, and renaming the grant itself on the host ends the session with sandbox_deny_replaced', async () => {
    const outside = fs.mkdtempSync('/var/tmp/warden-deny-');
    const grant = path.join(outside, 'projects');
    fs.mkdirSync(grant);
    fs.writeFileSync(path.join(grant, '.env'), 'TOKEN=secret\n');
    try {
      const set = cli(home, ['sandbox', 'probe', '--clear', '--network', 'none', '--allow-read', grant, '--deny-read', path.join(grant, '.env')]);
      expect(set.code, set.stderr).toBe(0);
      const { client: c, stderr } = await connectClient(home, 'probe');
      const closed = new Promise<void>((resolve) => (c.onclose = resolve));
      const read = async (p: string): Promise<string> => ((await c.callTool({ name: 'read', arguments: { path: p } })) as { content: { text: string }[] }).content[0]?.text ?? '';
      try {
        fs.writeFileSync(path.join(grant, '.env.tmp'), 'TOKEN=rotated\n');
        fs.renameSync(path.join(grant, '.env.tmp'), path.join(grant, '.env'));
        expect(await read(path.join(grant, '.env'))).toBe('denied: EACCES');
        // The grant's own name is the host's: moved away and made again, it would show a new .env.
        fs.renameSync(grant, `${grant}.old`);
        await closed;
      } finally {
        await c.close();
      }
      expect(stderr()).toContain(`${grant} (or a directory above it), on the way to a read.deny path and a name of the host's, was replaced`);
      expect(auditEvents(home).filter((e) => e.event === 'sandbox_deny_replaced')).toEqual([expect.objectContaining({ server: 'probe', path: grant })]);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});
