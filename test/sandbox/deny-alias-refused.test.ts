import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addedHome } from '../helpers/run-template.js';
import { NODE, SERVERS, WARDEN, auditEvents, cli, tempDir } from '../helpers/warden.js';

// review 16, finding 2 (test/attack39/deny-bind-alias.test.ts accepts a denied read or a refused launch): which
// refusal, proven. A read.deny path whose directory another mount shows (a bind mount, found by device and inode in
// the warden's own mount namespace) is refused when set (SANDBOX_INVALID) and at launch (SANDBOX_UNAVAILABLE),
// naming the alias. The warden runs in a mount namespace of the test's own where the alias exists (unshare -m).

let dir: string;
let home: string;
let data: string;
let alias: string;
const inAlias = (args: string[]) =>
  spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', 'mount --bind "$1" "$2" && shift 2 && exec "$@"', 'sh', data, alias, NODE, WARDEN, '--home', home, ...args], { input: '', encoding: 'utf8', timeout: 60_000 });

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  addedHome(home, 'probe', [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]); // one add a run, copied
  const outside = fs.mkdtempSync('/var/tmp/warden-deny-alias-');
  data = path.join(outside, 'data');
  alias = path.join(outside, 'alias');
  fs.mkdirSync(data);
  fs.mkdirSync(alias);
  fs.writeFileSync(path.join(data, 'secret.env'), 'TOKEN=secret\n');
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(path.dirname(data), { recursive: true, force: true });
});

describe('a read.deny path whose directory a bind mount also shows', () => {
  it('is refused when set (SANDBOX_INVALID), naming the alias, and the sandbox is unchanged', () => {
    const r = inAlias(['sandbox', 'probe', '--network', 'none', '--deny-read', path.join(data, 'secret.env')]);
    expect(r.stderr).toContain(`SANDBOX_INVALID: `);
    expect(r.stderr).toContain(`${alias} is a mount of ${data}`);
    expect(r.status).toBe(2);
    expect(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).not.toContain('secret.env');
  });

  it('set without the alias, is refused at launch once the alias exists (SANDBOX_UNAVAILABLE, exit 3)', () => {
    const set = cli(home, ['sandbox', 'probe', '--network', 'none', '--deny-read', path.join(data, 'secret.env')]);
    expect(set.code, set.stderr).toBe(0);
    const before = auditEvents(home).length;
    const r = inAlias(['run', 'probe']);
    expect(r.stderr).toContain('SANDBOX_UNAVAILABLE');
    expect(r.stderr).toContain(`${alias} is a mount of ${data}`);
    expect(r.status).toBe(3);
    const launches = auditEvents(home).slice(before).filter((e) => e.event === 'launch' && e.server === 'probe');
    expect(launches).toEqual([expect.objectContaining({ decision: 'refuse', code: 'SANDBOX_UNAVAILABLE' })]);
  });
});
