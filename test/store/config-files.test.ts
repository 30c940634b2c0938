import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli, tempDir } from '../helpers/warden.js';

let home: string;
beforeEach(() => {
  home = tempDir();
  fs.mkdirSync(path.join(home, 'run'), { mode: 0o700 });
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

function writeServers(text: string, mode = 0o600): string {
  const file = path.join(home, 'servers.json');
  fs.writeFileSync(file, text, { mode });
  fs.chmodSync(file, mode);
  return file;
}

describe('servers.json that the warden refuses', () => {
  it('names the file, line and column of a syntax error, and exits 2', () => {
    const file = writeServers('{\n  "version": 1,\n  "servers": {,}\n}\n');
    const r = cli(home, ['status']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`servers.json at ${file} is not valid JSON`);
    expect(r.stderr).toMatch(/line 3 column 15/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('refuses a duplicate key instead of letting the last one win', () => {
    writeServers('{"version":1,"servers":{"a":{"command":"/bin/true"},"a":{"command":"/bin/false"}}}');
    const r = cli(home, ['status']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('duplicate key "a" in object at /servers');
  });

  it('names the JSON pointer of a value of the wrong type', () => {
    writeServers('{"version":1,"servers":{"fs":{"command":"/bin/true","args":["ok",7]}}}');
    const r = cli(home, ['status']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`FILE_INVALID: wrong type in servers.json at /servers/fs/args/1: expected a string, found the number 7. File: ${path.join(home, 'servers.json')}. Fix that value`);
  });

  it('refuses an unknown key rather than ignoring a typo', () => {
    writeServers('{"version":1,"servers":{"fs":{"command":"/bin/true","passenv":["HOME"]}}}');
    const r = cli(home, ['status']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown key 'passenv' in servers.json at /servers/fs (did you mean 'passEnv'?)");
  });

  it('names a key it does not know in plain words, and what to do, for run as for the other verbs', () => {
    writeServers('{"version":1,"servers":{"fx":{"command":"/bin/true","quarantine":{"mode":"strict"}}}}');
    for (const args of [['status'], ['run', 'fx']]) {
      const r = cli(home, args);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('FILE_INVALID: ');
      expect(r.stderr).toContain("unknown key 'quarantine' in servers.json at /servers/fx");
      expect(r.stderr).toContain('Remove it, or upgrade mcp-warden if a newer version wrote it');
      expect(r.stderr).not.toMatch(/Invalid key|Expected never/);
    }
  });

  it('refuses a relative directory in the trusted PATH', () => {
    writeServers('{"version":1,"path":"/usr/bin:bin","servers":{}}');
    const r = cli(home, ['status']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bad value "/usr/bin:bin" in servers.json at /path: every directory of the trusted path must be absolute');
  });

  it('refuses a servers.json that other users can write, and says which chmod fixes it', () => {
    const file = writeServers('{"version":1,"servers":{}}', 0o666);
    const r = cli(home, ['status']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`servers.json at ${file} is writable by group and others (mode 0666). Run: chmod go-w ${file}`);
  });

  it('refuses a home directory that its group can write', () => {
    fs.chmodSync(home, 0o770);
    const r = cli(home, ['status']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`the warden home at ${home} is writable by group (mode 0770). Run: chmod go-w ${home}`);
  });

  it('refuses a trust file that is a symbolic link', () => {
    const elsewhere = path.join(home, 'elsewhere.json');
    fs.writeFileSync(elsewhere, '{"version":1,"servers":{}}', { mode: 0o600 });
    fs.symlinkSync(elsewhere, path.join(home, 'servers.json'));
    const r = cli(home, ['status']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is a symbolic link');
  });

  it('refuses an allowlist entry whose digest is not hex, naming the entry', () => {
    fs.writeFileSync(path.join(home, 'allowlist.json'), JSON.stringify({ version: 1, entries: [{ path: '/usr/bin/node', kind: 'executable', sha256: 'abc', addedAt: '2026-11-29T00:00:00Z' }] }), { mode: 0o600 });
    const r = cli(home, ['allowlist', 'list']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bad value "abc" in allowlist.json at /entries/0/sha256: expected 64 lowercase hex digits');
  });

  it('answers an unknown server id with the ids that exist', () => {
    writeServers('{"version":1,"servers":{"alpha":{"command":"/bin/true"}}}');
    const r = cli(home, ['status', 'beta']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no server 'beta'");
    expect(r.stderr).toContain('(configured: alpha)');
  });

  it('exits 2 on a usage error', () => {
    const r = cli(home, ['allowlist', 'frobnicate']);
    expect(r.code).toBe(2);
  });
});
