import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addServerWarm } from '../helpers/warm-digest.js';
import { NODE, SERVERS, WARDEN, tempDir } from '../helpers/warden.js';

// review 12: the grant policy (src/sandbox/grant-policy.ts) judges a grant by its name and its realpath: "is,
// holds or lies inside" a protected directory is a comparison of strings. A bind mount gives a directory a second
// name that no realpath resolves to the first (container hosts, chroots, /srv and /mnt aliases): a write grant on
// the alias of a directory of the trusted path passes, and the confined server writes, as the warden's uid, into
// the directory where the warden looks bwrap, nsenter, git and every server's command up. Asserts that a write
// grant that reaches a protected directory under another name is refused when set, like the directory itself.
// The alias is made in a user and mount namespace of the test's own (unshare -rm), where the warden runs.

let dir: string;
let home: string;
let bin: string;
let alias: string;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  bin = path.join(dir, 'tools/bin');
  alias = path.join(dir, 'mnt/tools-bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.mkdirSync(alias, { recursive: true });
  addServerWarm(home, 'b', [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]);
  const file = path.join(home, 'servers.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8'));
  config.path = `${bin}:${config.path}`;
  fs.writeFileSync(file, JSON.stringify(config, null, 2));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a write grant on a bind-mounted alias of a directory of the trusted path', () => {
  it('is refused when set (SANDBOX_INVALID), as the directory itself is, and the sandbox is not changed', () => {
    const r = spawnSync('unshare', ['-rm', 'sh', '-c', 'mount --bind "$1" "$2" && exec "$3" "$4" --home "$5" sandbox b --network none --allow-write "$2"', 'sh', bin, alias, process.execPath, WARDEN, home], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toMatch(/SANDBOX_INVALID: /);
    expect(r.status).toBe(2);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).servers.b.sandbox).toBeUndefined();
  });
});

describe("a read grant on a bind-mounted alias of the warden's home (the neighbour, fixed with it)", () => {
  it('is refused when set (SANDBOX_INVALID), as the home itself is, and the sandbox is not changed', () => {
    const homeAlias = path.join(dir, 'mnt/warden-home');
    fs.mkdirSync(homeAlias, { recursive: true });
    const r = spawnSync('unshare', ['-rm', 'sh', '-c', 'mount --bind "$1" "$2" && exec "$3" "$4" --home "$1" sandbox b --network none --allow-read "$2"', 'sh', home, homeAlias, process.execPath, WARDEN], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toMatch(/SANDBOX_INVALID: .*the warden's home/);
    expect(r.status).toBe(2);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).servers.b.sandbox).toBeUndefined();
  });
});

describe('a write grant holding a bind-mounted alias of a directory of the trusted path (the neighbour, fixed after)', () => {
  it('is refused when set (SANDBOX_INVALID): a mount point below it is the trusted directory by device and inode', () => {
    const r = spawnSync('unshare', ['-rm', 'sh', '-c', 'mount --bind "$1" "$2" && exec "$3" "$4" --home "$5" sandbox b --network none --allow-write "$6"', 'sh', bin, alias, process.execPath, WARDEN, home, path.dirname(alias)], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toMatch(/SANDBOX_INVALID: .*holds/);
    expect(r.status).toBe(2);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).servers.b.sandbox).toBeUndefined();
  });
});
