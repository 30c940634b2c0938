import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { denyChains, denyLayout, linksOnTheWay, type DenyScope } from '../../dist/sandbox/deny-plan.js';
import { tempDir } from '../helpers/warden.js';

// The plan of read.deny's hiding (src/sandbox/deny-plan.ts), judged without a launch: which directories are
// rebuilt inside the sandbox, which names stay on the host's side (watched by `run`), and what each entry of a
// rebuilt directory becomes. test/attack35/deny-replaced-or-later.test.ts proves the hiding in a real sandbox.

let dir: string;
let grant: string;
const refuse = (what: string): never => {
  throw new Error(what);
};
const scope = (s: Partial<DenyScope>): DenyScope => ({ hidden: [], writable: [], readable: [], ...s });

beforeAll(() => {
  dir = fs.realpathSync(tempDir());
  grant = path.join(dir, 'grant');
  fs.mkdirSync(path.join(grant, 'secrets/inner'), { recursive: true });
  fs.writeFileSync(path.join(grant, '.env'), 'TOKEN=1\n');
  fs.writeFileSync(path.join(grant, 'readme'), 'hi\n');
  fs.symlinkSync('readme', path.join(grant, 'link'));
  execFileSync('mkfifo', [path.join(grant, 'fifo')]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the hiding of read.deny', () => {
  it('rebuilds only the grant holding a denied name when the grant lies in a directory only the sandbox has, and leaves no name to watch', () => {
    const c = denyChains([path.join(grant, '.env')], scope({ hidden: [dir], readable: [grant] }), refuse);
    expect(c).toMatchObject({ rebuild: [grant], exposed: [], atRoot: [] });
    expect([...c.denied]).toEqual([path.join(grant, '.env')]);
  });

  it('rebuilds up to the grant when the grant is mounted on a name of the host\'s, and leaves that name to the watch', () => {
    const c = denyChains([path.join(grant, 'secrets/inner/key')], scope({ readable: [grant] }), refuse);
    expect(c.rebuild).toEqual([grant, path.join(grant, 'secrets'), path.join(grant, 'secrets/inner')]);
    expect(c.exposed).toEqual([grant]);
  });

  it('rebuilds the directory alone for a name no grant shows (the root bind), and leaves that directory to the watch', () => {
    const c = denyChains([path.join(grant, 'secrets/inner/key')], scope({}), refuse);
    expect(c.rebuild).toEqual([path.join(grant, 'secrets/inner')]);
    expect(c.exposed).toEqual([path.join(grant, 'secrets/inner')]);
  });

  it('needs nothing for a name inside a hidden directory and no grant, and hides a missing path by its first missing name', () => {
    expect(denyChains([path.join(dir, 'x/.env')], scope({ hidden: [dir] }), refuse).rebuild).toEqual([]);
    const c = denyChains([path.join(grant, 'later/deeper/.env')], scope({ hidden: [dir], readable: [grant] }), refuse);
    expect([...c.denied]).toEqual([path.join(grant, 'later')]);
  });

  it('refuses a deny path that is also granted', () => {
    expect(() => denyChains([grant], scope({ hidden: [dir], readable: [grant] }), refuse)).toThrow(`the read.deny path ${grant} is also granted`);
  });

  it('hides a name inside a denied directory by that directory, unless a grant lies between: then that grant\'s directory is rebuilt too', () => {
    const secrets = path.join(grant, 'secrets');
    const inner = path.join(secrets, 'inner');
    expect(denyChains([secrets, path.join(inner, 'key')], scope({ hidden: [dir], readable: [grant] }), refuse).rebuild).toEqual([grant]);
    expect(denyChains([secrets, path.join(inner, 'key')], scope({ hidden: [dir], readable: [grant, inner] }), refuse).rebuild).toEqual([grant, inner]);
  });

  it('binds back every other entry (read-write in a write grant), recreates links, shows no fifo, and gives a denied file /dev/null and a denied directory an empty read-only tmpfs', () => {
    const fds: number[] = [];
    try {
      const l = denyLayout([path.join(grant, '.env'), path.join(grant, 'secrets')], scope({ hidden: [dir], writable: [grant] }), fds, refuse);
      expect(l.mounts.map((m) => [m.op, path.relative(dir, m.path)])).toEqual([
        ['tmpfs', 'grant'],
        ['symlink', 'grant/link'],
        ['bind-fd', 'grant/readme'],
        ['null', 'grant/.env'],
        ['tmpfs', 'grant/secrets'],
      ]);
      expect(l.readOnly).toEqual([grant, path.join(grant, 'secrets')]);
      expect(fds).toHaveLength(3); // link, fifo (opened, not shown), readme
    } finally {
      for (const fd of fds) fs.closeSync(fd);
    }
  });

  it('lists every link on the way to a deny path, a link inside a link target and an absolute one included (run watches each by its own name)', () => {
    const deploy = path.join(dir, 'deploy');
    fs.mkdirSync(path.join(deploy, 'store/v1'), { recursive: true });
    fs.symlinkSync(path.join(deploy, 'store'), path.join(deploy, 'releases'));
    fs.symlinkSync('releases/v1', path.join(deploy, 'current'));
    expect(linksOnTheWay(path.join(deploy, 'current/.env'))).toEqual([path.join(deploy, 'current'), path.join(deploy, 'releases')]);
    expect(linksOnTheWay(path.join(deploy, 'store/v1/.env'))).toEqual([]);
    expect(linksOnTheWay(path.join(deploy, 'missing/current/.env'))).toEqual([]);
  });
});
