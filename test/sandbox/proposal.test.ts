import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEMORY, NODE, SERVERS, auditEvents, cli, connectClient } from '../helpers/warden.js';

// The sandbox proposed from what the enrollment launches did (src/sandbox/observe.ts, propose.ts; docs/adr/0063):
// the launches run with the user's home and /tmp under overlays, so what a server writes at start-up is listed
// in the proposal and never reaches the real files; `sandbox <id> --propose --yes` applies it.

const HOSTILE = path.join(SERVERS, 'i29/writes-at-start.mjs');

let dir: string;
let home: string;
let user: string;
let env: Record<string, string>;
let tag: string;
let added: ReturnType<typeof cli>;

beforeAll(() => {
  dir = fs.mkdtempSync('/var/tmp/warden-proposal-');
  home = path.join(dir, 'home');
  user = path.join(dir, 'user');
  fs.mkdirSync(user);
  fs.writeFileSync(path.join(user, '.bashrc-i29'), 'the real file\n');
  tag = path.basename(user);
  fs.writeFileSync(`/tmp/i29-victim-${tag}`, 'victim\n');
  env = { ...(process.env as Record<string, string>), HOME: user };
  fs.mkdirSync(`/tmp/i29-named-${tag}`); // an argument it ignores: a directory its configuration names, under /tmp
  added = cli(home, ['add', 'dropper', '--yes', '--', NODE, HOSTILE, `/tmp/i29-named-${tag}`], { env });
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const f of [`/tmp/i29-victim-${tag}`, `/tmp/i29-dropped-${tag}`, `/tmp/i29-named-${tag}`]) fs.rmSync(f, { recursive: true, force: true });
});

const proposalFile = (id: string): string => path.join(home, 'proposals', `${id}.sandbox.json`);

describe('a server that writes into the home and /tmp at start-up', () => {
  it('enrolls, and none of its writes reached the real files', () => {
    expect(added.code, added.stderr + added.stdout).toBe(0);
    expect(fs.readFileSync(path.join(user, '.bashrc-i29'), 'utf8')).toBe('the real file\n');
    expect(fs.existsSync(`/tmp/i29-dropped-${tag}`)).toBe(false);
    expect(fs.readFileSync(`/tmp/i29-victim-${tag}`, 'utf8')).toBe('victim\n');
    expect(fs.existsSync(path.join(home, 'observe'))).toBe(false); // the upper directories are gone
  });

  it("has a proposal (owner-only) naming each write as the server's own behaviour, granting none of them", () => {
    expect(fs.statSync(proposalFile('dropper')).mode & 0o777).toBe(0o600);
    const p = JSON.parse(fs.readFileSync(proposalFile('dropper'), 'utf8')) as { writes: { path: string; kind: string }[]; write: string[]; observed: { network: string } };
    expect(p.writes).toEqual(expect.arrayContaining([
      { path: path.join(user, '.bashrc-i29'), kind: 'write' },
      { path: `/tmp/i29-dropped-${tag}`, kind: 'write' },
      { path: `/tmp/i29-victim-${tag}`, kind: 'delete' },
    ]));
    expect(p.write).toEqual([]);
    expect(p.observed.network).toBe('not_observed');
    expect(added.stdout).toContain(`Proposed sandbox for server 'dropper'`);
    expect(added.stdout).toContain(`${path.join(user, '.bashrc-i29')}: a grant would be ${user} whole`);
  });

  it('says that a directory its configuration names under /tmp is not proposed, why, and how to grant it (a confined server sees a private, empty /tmp)', () => {
    const p = JSON.parse(fs.readFileSync(proposalFile('dropper'), 'utf8')) as { notGranted: { path: string; why: string }[] };
    const why = `not proposed: it lies in /tmp, which a confined server sees as a private, empty one; grant it by hand (sandbox dropper --allow-write /tmp/i29-named-${tag}) if the server needs it`;
    expect(p.notGranted).toContainEqual({ path: `/tmp/i29-named-${tag}`, why });
    expect(added.stdout).toContain(`    /tmp/i29-named-${tag}: ${why}\n`);
  });

  it('shows the same proposal again with sandbox --propose, and changes nothing without --yes', () => {
    const shown = cli(home, ['sandbox', 'dropper', '--propose'], { env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`deleted /tmp/i29-victim-${tag}`);
    expect(auditEvents(home).filter((e) => e.event === 'sandbox_changed')).toEqual([]);
    const view = cli(home, ['sandbox', 'dropper'], { env });
    expect(view.stdout).toContain('A sandbox was proposed from what its enrollment launches did');
  });

  it('refuses --propose for a server with no proposal: SANDBOX_PROPOSAL_MISSING', () => {
    const r = cli(home, ['sandbox', 'other', '--propose', '--yes'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('SANDBOX_PROPOSAL_MISSING');
  });
});

describe('a host where the launch cannot be observed', () => {
  it('enrolls exactly as before and says in one line that no proposal could be made, and why', () => {
    const bare = path.join(dir, 'bare-home');
    const empty = path.join(dir, 'empty-bin'); // a trusted path without unshare, sh or mount
    fs.mkdirSync(bare);
    fs.mkdirSync(empty);
    fs.writeFileSync(path.join(bare, 'servers.json'), JSON.stringify({ version: 1, path: empty, servers: {} }));
    const r = cli(bare, ['add', 'plain', '--yes', '--', NODE, path.join(SERVERS, 'basic.mjs')], { env });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain(`No sandbox could be proposed for server 'plain': its enrollment launches were not observed (unshare, sh, mount, umount (util-linux, a shell) not found as root- or warden-owned files on the trusted path ${empty}). It runs as before, without a sandbox.`);
    expect(fs.existsSync(path.join(bare, 'proposals'))).toBe(false);
  });
});

describe('server-memory, which keeps memory.jsonl beside its own script', () => {
  const stray = path.join(path.dirname(MEMORY), 'memory.jsonl');

  it('is offered MEMORY_FILE_PATH in its data directory; once the proposal is applied, its memory is written there and its package is unchanged', async () => {
    expect(fs.existsSync(stray)).toBe(false);
    const add = cli(home, ['add', 'memory', '--yes', '--', NODE, MEMORY], { env });
    expect(add.code, add.stderr + add.stdout).toBe(0);
    const file = path.join(home, 'data/memory/memory.jsonl');
    expect(add.stdout).toContain(`offered environment: MEMORY_FILE_PATH=${file} (heuristic:`);
    const applied = cli(home, ['sandbox', 'memory', '--propose', '--yes'], { env });
    expect(applied.code, applied.stderr).toBe(0);
    // Confined, a server may answer otherwise than the lock and canary recorded unconfined: the next step is said.
    // The check `verify` makes is run on the server confined, and its outcome said, with the next step.
    expect(applied.stdout).toContain(`Its lock and canary were recorded unconfined; its surface, launched confined now (what mcp-warden --home ${home} verify memory checks):\nmemory: ok (9 tools match sha256:`);
    expect(applied.stdout).toContain(`Next: its canary is checked at each session: if it fails confined, record it again: mcp-warden --home ${home} canary record memory\n`);
    expect(auditEvents(home).filter((e) => e.event === 'sandbox_changed' && e.server === 'memory')).toHaveLength(1);
    const { client } = await connectClient(home, 'memory', env);
    try {
      const r = (await client.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'alice', entityType: 'person', observations: ['likes tea'] }] } })) as { isError?: boolean };
      expect(r.isError).not.toBe(true);
    } finally {
      await client.close();
    }
    expect(fs.readFileSync(file, 'utf8')).toContain('alice');
    expect(fs.existsSync(stray)).toBe(false);
    const verify = cli(home, ['verify', 'memory'], { env });
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);
  });
});

describe('a server that describes its tools otherwise once confined', () => {
  it('is checked when its proposal is applied: the drift is reported with the diff and pin commands, and nothing is pinned', () => {
    const flag = path.join(user, 'notes-flag');
    fs.writeFileSync(flag, '');
    const add = cli(home, ['add', 'seer', '--yes', '--env', `FLAG_FILE=${flag}`, '--', NODE, path.join(SERVERS, 'world2/home-reader.mjs')], { env });
    expect(add.code, add.stderr + add.stdout).toBe(0);
    const lock = fs.readFileSync(path.join(home, 'tools.lock'), 'utf8');
    const applied = cli(home, ['sandbox', 'seer', '--propose', '--yes'], { env });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('\nseer: DRIFT (most severe: ');
    expect(applied.stdout).toContain(`Next: until you decide, its sessions hide or refuse what drifted: review it with mcp-warden --home ${home} diff seer, then accept it with mcp-warden --home ${home} pin seer (nothing was pinned)`);
    expect(fs.readFileSync(path.join(home, 'tools.lock'), 'utf8')).toBe(lock);
  });
});
