import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli } from '../helpers/warden.js';
import { enrolledWriter } from '../helpers/writer-proposal.js';

// Review 13, findings 2 and 4: the sandbox proposal (src/sandbox/propose.ts) turned the folder above each
// observed write into a write grant, and every folder kept real (the server's own code root included) too. A
// server that plants a login key, a systemd user unit and an autostart entry during `add`, from a script under
// the user's home, must get none of those folders, nor its own code root, proposed or pinned.

const PLANTED = ['.ssh', '.config/systemd/user', '.config/autostart'];

const writer = enrolledWriter('warden-i36-', 'elf', [...PLANTED, 'servers/elf'], (user) => {
  const elf = path.join(user, 'servers/elf');
  // Its executable lies in the home (as under nvm): the launch binds it back over the home's overlay. A copy, never
  // a hard link: linking changes the ctime of NODE's inode, and every test launching NODE at that moment is
  // refused as "modified between digest and exec".
  fs.copyFileSync(NODE, path.join(elf, 'elf-server'));
  fs.chmodSync(path.join(elf, 'elf-server'), 0o755);
  return [path.join(elf, 'elf-server'), path.join(SERVERS, 'i36/session-dropper.mjs')];
});

describe('a server under the home that writes where the session runs programs or accepts logins', () => {
  it('is proposed no grant over those folders nor its own code, and lists each such write as not granted', () => {
    expect(writer.added.code, writer.added.stderr + writer.added.stdout).toBe(0);
    expect(fs.existsSync(path.join(writer.user, '.ssh/authorized_keys'))).toBe(false);
    const p = writer.proposal<{ write: string[]; notGranted: { path: string; why: string }[] }>();
    expect(p.write).toEqual([]);
    for (const f of ['.ssh/authorized_keys', '.config/systemd/user/evil.service', '.config/autostart/evil.desktop']) {
      const entry = p.notGranted.find((n) => n.path === path.join(writer.user, f));
      expect(entry?.why, f).toMatch(/where the user's session runs programs or accepts logins/);
    }
    const own = p.notGranted.find((n) => n.path === path.join(writer.user, 'servers/elf/elf-server'));
    expect(own?.why).toBe("kept real, not granted: the server's own code (its executable, script or install) is never granted");
  });

  it('does not print its own code among the places its configuration names (kept real for the launch, never a grant to ask for)', () => {
    expect(writer.added.stdout).not.toContain(`    ${path.join(writer.user, 'servers/elf/elf-server')}: kept real, not granted`);
    expect(writer.added.stdout).not.toContain('its configuration names, and the proposal does not grant');
  });

  it('pins no such grant with sandbox --propose --yes', () => {
    const applied = cli(writer.home, ['sandbox', 'elf', '--propose', '--yes'], { env: writer.env });
    expect(applied.code, applied.stderr).toBe(0);
    const servers = JSON.parse(fs.readFileSync(path.join(writer.home, 'servers.json'), 'utf8')) as { servers: Record<string, { sandbox: { write: string[] } }> };
    expect(servers.servers.elf?.sandbox.write).toEqual([]);
  });
});

describe("a write grant set by hand over the user's session", () => {
  it.each([
    ['.local/bin', /is, holds or lies inside \S+\/\.local\/bin, where the user's session runs programs or accepts logins/],
    ['.config', /holds or lies inside \S+\/\.config\/systemd, where the user's session runs programs or accepts logins/],
    ['.profile', /is a file at the top of the home \S+, where the user's session runs programs or accepts logins/],
  ])('~/%s is refused (SANDBOX_INVALID) and the sandbox is not changed', (rel, message) => {
    const grant = path.join(writer.user, rel);
    if (rel === '.profile') fs.writeFileSync(grant, '# rc\n');
    else fs.mkdirSync(grant, { recursive: true });
    const r = cli(writer.home, ['sandbox', 'elf', '--network', 'none', '--allow-write', grant, '--pin'], { env: writer.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/SANDBOX_INVALID: /);
    expect(r.stderr).toMatch(message);
    const servers = JSON.parse(fs.readFileSync(path.join(writer.home, 'servers.json'), 'utf8')) as { servers: Record<string, { sandbox: { write: string[] } }> };
    expect(servers.servers.elf?.sandbox.write).toEqual([]);
  });
});
