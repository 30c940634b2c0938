import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NODE, SERVERS, addServer, cli, tempDir } from '../helpers/warden.js';

// State the warden acts on besides the trust files (the digest cache, the audit log and its lock, backups/,
// packages/) is refused, like the trust files, when another user owns it or could write it: the message names
// the file and the chmod or chown that fixes it. (Run as root here: uid 65534 plays the other user.)

let template: string;
let dir: string;
let home: string;
// One home with basic.mjs added (it names nothing inside itself), copied for each test and never changed.
beforeAll(() => {
  template = path.join(tempDir(), 'home');
  addServer(template, 'basic', [NODE, path.join(SERVERS, 'basic.mjs')]);
});
afterAll(() => fs.rmSync(path.dirname(template), { recursive: true, force: true }));
beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  fs.cpSync(template, home, { recursive: true });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function expectRefused(args: string[], file: string, fix: RegExp): void {
  const r = cli(home, args);
  // An insecure file is invalid configuration (exit 2), for run too (which also answers the client's request).
  expect(r.code, r.stdout + r.stderr).toBe(2);
  expect(r.stderr).toContain('FILE_INSECURE');
  if (args[0] === 'run') expect(r.stderr).toContain("refused to launch server 'basic'");
  expect(r.stderr).toContain(file);
  expect(r.stderr).toMatch(fix);
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

describe('the digest cache', () => {
  it('refuses a cache directory that others can write, for run and status', () => {
    const cacheDir = path.join(home, 'cache');
    fs.chmodSync(cacheDir, 0o777);
    expectRefused(['run', 'basic'], cacheDir, new RegExp(`chmod go-w ${cacheDir}`));
    expectRefused(['status'], cacheDir, new RegExp(`chmod go-w ${cacheDir}`));
    fs.chmodSync(cacheDir, 0o700);
    expect(cli(home, ['status']).code).toBe(0);
  });

  it('never trusts a cache file written by another user, even one only it can write', () => {
    const cacheFile = path.join(home, 'cache', 'digests.basic.json');
    expect(fs.existsSync(cacheFile)).toBe(true);
    fs.chownSync(cacheFile, 65534, 65534);
    expectRefused(['run', 'basic'], cacheFile, /owned by uid 65534.*chown/);
  });

  it("refuses every command while another server's cache file, or the old single one, is another user's", () => {
    for (const name of ['digests.other.json', 'digests.json']) {
      const file = path.join(home, 'cache', name);
      fs.writeFileSync(file, '{"version":1,"entries":{}}\n', { mode: 0o600 });
      fs.chownSync(file, 65534, 65534);
      expectRefused(['run', 'basic'], file, /owned by uid 65534.*chown/);
      expectRefused(['status'], file, /owned by uid 65534.*chown/);
      fs.rmSync(file);
    }
  });

  it('refuses a cache directory owned by another user', () => {
    const cacheDir = path.join(home, 'cache');
    fs.chownSync(cacheDir, 65534, 65534);
    expectRefused(['status'], cacheDir, /owned by uid 65534.*chown/);
  });
});

describe('the audit log', () => {
  it('refuses to append to or read an audit log that others can write', () => {
    const log = path.join(home, 'audit.log');
    fs.chmodSync(log, 0o620);
    expectRefused(['run', 'basic'], log, new RegExp(`chmod go-w ${log}`));
    expectRefused(['audit', 'verify'], log, new RegExp(`chmod go-w ${log}`));
    expectRefused(['audit', 'show'], log, new RegExp(`chmod go-w ${log}`));
    expectRefused(['status'], log, new RegExp(`chmod go-w ${log}`));
  });

  it('refuses an audit log owned by another user', () => {
    const log = path.join(home, 'audit.log');
    fs.chownSync(log, 65534, 65534);
    expectRefused(['audit', 'verify'], log, /owned by uid 65534.*chown/);
    expectRefused(['run', 'basic'], log, /owned by uid 65534.*chown/);
  });

  it('refuses an audit lock left by another user', () => {
    const lock = path.join(home, 'audit.log.lock');
    fs.mkdirSync(lock);
    fs.chownSync(lock, 65534, 65534);
    expectRefused(['run', 'basic'], lock, /owned by uid 65534.*chown/);
  });
});

describe('backups/ and packages/', () => {
  it('refuses a backups or packages directory that others can write', () => {
    const backups = path.join(home, 'backups');
    fs.mkdirSync(backups, { mode: 0o777 });
    fs.chmodSync(backups, 0o777);
    expectRefused(['status'], backups, new RegExp(`chmod go-w ${backups}`));
    fs.chmodSync(backups, 0o700);
    const packages = path.join(home, 'packages');
    fs.mkdirSync(packages, { mode: 0o775 });
    fs.chmodSync(packages, 0o775);
    expectRefused(['status'], packages, new RegExp(`chmod go-w ${packages}`));
  });
});
