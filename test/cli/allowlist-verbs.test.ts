import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE, SERVERS, addServer, auditEvents, cli, escapeRegExp, tempDir } from '../helpers/warden.js';

let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('allowlist verbs', () => {
  it('add, list and remove an executable, a script and a package tree', () => {
    const fixtures = path.join(dir, 'servers');
    fs.cpSync(SERVERS, fixtures, { recursive: true });
    expect(cli(home, ['allowlist', 'add', NODE, '--note', 'system node']).stdout).toMatch(new RegExp(`Added executable ${escapeRegExp(NODE)} sha256 [0-9a-f]{64}`));
    expect(cli(home, ['allowlist', 'add', path.join(fixtures, 'basic.mjs')]).stdout).toContain(`Added script ${path.join(fixtures, 'basic.mjs')}`);
    expect(cli(home, ['allowlist', 'add', fixtures]).stdout).toContain(`Added package ${fixtures}`);
    expect(cli(home, ['allowlist', 'add', NODE]).stdout).toContain('is already allowlisted');

    const listed = JSON.parse(cli(home, ['allowlist', 'list', '--json']).stdout) as { entries: { path: string; kind: string; note: string }[] };
    expect(listed.entries.map((e) => [e.kind, e.path])).toEqual([
      ['package', fixtures],
      ['script', path.join(fixtures, 'basic.mjs')],
      ['executable', NODE],
    ].sort((a, b) => ((a[1] as string) < (b[1] as string) ? -1 : 1)));
    expect(listed.entries.find((e) => e.path === NODE)?.note).toBe('system node');

    expect(cli(home, ['allowlist', 'remove', NODE]).stdout).toContain(`Removed executable ${NODE}`);
    const missing = cli(home, ['allowlist', 'remove', NODE]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("'mcp-warden allowlist list' shows the exact paths");
    expect(auditEvents(home).map((e) => [e.event, e.action])).toEqual([
      ['allowlist_changed', 'add'],
      ['allowlist_changed', 'add'],
      ['allowlist_changed', 'add'],
      ['allowlist_changed', 'remove'],
    ]);
  });

  it('records the realpath of a symlink, not the link', () => {
    const link = path.join(dir, 'node-link');
    fs.symlinkSync(NODE, link);
    expect(cli(home, ['allowlist', 'add', link]).stdout).toContain(`Added executable ${NODE}`);
  });

  it('verify exits 1 and names an entry whose file changed', () => {
    const fixtures = path.join(dir, 'servers');
    fs.cpSync(SERVERS, fixtures, { recursive: true });
    addServer(home, 'basic', [NODE, path.join(fixtures, 'basic.mjs')]);
    expect(cli(home, ['allowlist', 'verify']).code).toBe(0);
    fs.appendFileSync(path.join(fixtures, 'basic.mjs'), '// edited\n');
    const r = cli(home, ['allowlist', 'verify', '--json']);
    expect(r.code).toBe(1);
    const states = (JSON.parse(r.stdout) as { entries: { path: string; state: string }[] }).entries.map((e) => [e.path, e.state]);
    expect(states).toContainEqual([path.join(fixtures, 'basic.mjs'), 'changed']);
    expect(states).toContainEqual([fixtures, 'changed']);
    expect(states).toContainEqual([NODE, 'ok']);

    const replaced = cli(home, ['allowlist', 'add', path.join(fixtures, 'basic.mjs')]);
    expect(replaced.stdout).toMatch(/Replaced script .*basic\.mjs sha256 [0-9a-f]{64} \(was [0-9a-f]{64}\)/);
    expect(auditEvents(home).pop()).toMatchObject({ event: 'allowlist_changed', action: 'replace', previousSha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('add refuses an id that exists, and a missing command', () => {
    addServer(home, 'basic', [NODE, path.join(SERVERS, 'basic.mjs')]);
    const again = cli(home, ['add', 'basic', '--yes', '--', NODE, path.join(SERVERS, 'basic.mjs')]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("server 'basic' is already in");
    const nothing = cli(home, ['add', 'other', '--yes', '--', '/nonexistent/server']);
    expect(nothing.code).toBe(3);
    expect(nothing.stderr).toContain('/nonexistent/server does not exist or is not an executable file');
    const npx = cli(home, ['add', 'fs', '--yes', '--', 'npx', '-y', '@modelcontextprotocol/server-filesystem', '/tmp']);
    expect(npx.code).toBe(3);
    expect(npx.stderr).toContain('REGISTRY_LAUNCHER');
  });

  it('status shows each artifact with its digest and whether it is allowlisted', () => {
    addServer(home, 'basic', [NODE, path.join(SERVERS, 'basic.mjs')]);
    fs.writeFileSync(path.join(home, 'status.sock'), ''); // left behind by a daemon that was killed: nobody answers
    const r = cli(home, ['status']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`daemon    not running (this view is read from the files in ${home})`);
    expect(r.stdout).toMatch(/^basic +allowed +none +2 tools +not judged yet +not run yet +\S+\/basic\.mjs$/m);
    expect(r.stdout).toMatch(new RegExp(`^basic +executable +[0-9a-f]{16} +allowlisted +${escapeRegExp(NODE)}$`, 'm'));
    const one = cli(home, ['status', 'basic']);
    expect(one.stdout).toMatch(/^basic {2}allowed {2}\(posture enforce\)/m);
    expect(one.stdout).toMatch(new RegExp(`executable ${escapeRegExp(NODE)}\\n +sha256 [0-9a-f]{64} {2}allowlisted`));
    cli(home, ['allowlist', 'remove', NODE]);
    const after = cli(home, ['status', 'basic', '--json']);
    expect(after.code).toBe(1);
    const s = (JSON.parse(after.stdout) as { servers: { allowed: boolean; artifacts: { kind: string; state: string }[] }[] }).servers[0];
    expect(s?.allowed).toBe(false);
    expect(s?.artifacts.find((a) => a.kind === 'executable')?.state).toBe('not_allowlisted');
  });
});
