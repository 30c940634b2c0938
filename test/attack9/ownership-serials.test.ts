import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addServer, cli } from '../helpers/warden.js';
import { keyPair, machine, serverCopy, sharedMachineA, signedBundle, snapshot, tempDir, type KeyPair } from '../bundle/helpers.js';
import { readHomeJson as read } from '../helpers/json-docs.js';

// attack9: what bundle-state.json remembers (applied.servers, applied.pinned) is one record of the last apply,
// and the checks read more into it than it holds.

let root: string;
let homeA: string;
let k1: KeyPair;
let k2: KeyPair;
let n = 0;

const bundle = (name: string, key: KeyPair, flags: string[]): string => signedBundle(homeA, path.join(root, `${name}.bundle.json`), key, flags);
const freshB = (): string => machine(root, `B${++n}`);
/** A server of the machine's own (its own copy of the basic server). */
function ownServer(home: string, id: string): void {
  const dir = path.join(root, `own-${path.basename(home)}-${id}`);
  fs.mkdirSync(dir);
  addServer(home, id, ['node', serverCopy(dir)], ['--env', 'SECRET_TOKEN=machine-own']);
}

beforeAll(() => {
  root = tempDir('warden-attack9-own-');
  homeA = sharedMachineA(root).homeA;
  const dir = path.join(root, 'second');
  fs.mkdirSync(dir);
  addServer(homeA, 'second', ['node', serverCopy(dir)], ['--env', 'SECRET_TOKEN=a']);
  k1 = keyPair(root, 'k1');
  k2 = keyPair(root, 'k2');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('attack9: serials per pinned signer', () => {
  it("a signer's serial floor survives another signer's apply: its older bundle is refused when the machine pins it again", () => {
    // The source holds every bundle ever published: an old one of k1 (serial 5, say with a server since withdrawn).
    const old = bundle('k1-old', k1, ['--serial', '5']);
    const current = bundle('k1-current', k1, ['--serial', '10']);
    const other = bundle('k2', k2, ['--serial', '20', '--servers', 'basic']);
    const homeB = freshB();
    const env = ['--env', 'basic.SECRET_TOKEN=b', '--env', 'second.SECRET_TOKEN=b'];
    expect(cli(homeB, ['bundle', 'apply', current, '--key', k1.pub, ...env]).code).toBe(0);
    // Another pin applies once (the operator's break-glass key with the CLI, a second fleet): serial 20.
    expect(cli(homeB, ['bundle', 'apply', other, '--key', k2.pub]).code).toBe(0);
    // The machine pins k1 again (the daemon's fleet section never stopped pinning it): whoever controls only the
    // source serves k1's serial-5 bundle, below the 10 this machine applied from k1.
    const before = snapshot(homeB);
    const r = cli(homeB, ['bundle', 'apply', old, '--key', k1.pub, ...env]);
    expect(r.stderr).toContain('BUNDLE_ROLLBACK');
    expect(r.code).toBe(3);
    expect(snapshot(homeB)).toEqual(before);
  });
});

describe('attack9: servers the machine configured itself', () => {
  it('on a home whose bundle-state predates applied.servers, a bundle naming a server no bundle brought is refused without --adopt', () => {
    const basicOnly = bundle('legacy-basic', k1, ['--serial', '30', '--servers', 'basic']);
    const both = bundle('legacy-both', k1, ['--serial', '31']);
    const homeB = freshB();
    expect(cli(homeB, ['bundle', 'apply', basicOnly, '--key', k1.pub, '--env', 'basic.SECRET_TOKEN=b']).code).toBe(0);
    // bundle-state.json as the mcp-warden before applied.servers / applied.pinned wrote it.
    const state = read(homeB, 'bundle-state.json');
    delete state.applied.servers;
    delete state.applied.pinned;
    fs.writeFileSync(path.join(homeB, 'bundle-state.json'), JSON.stringify(state, null, 2) + '\n');
    // After that apply, the operator added a server of its own: its allowlist entries say so (no "trust bundle").
    ownServer(homeB, 'second');
    const before = snapshot(homeB);
    const r = cli(homeB, ['bundle', 'apply', both, '--key', k1.pub, '--env', 'second.SECRET_TOKEN=x']);
    expect(r.stderr).toContain('BUNDLE_SERVER_CONFLICT');
    expect(r.code).toBe(3);
    expect(snapshot(homeB)).toEqual(before);
  });

  it('a server the operator removed from the fleet by hand and added again as its own is not deleted by the next bundle', () => {
    const both = bundle('stale-both', k1, ['--serial', '40']);
    const basicOnly = bundle('stale-basic', k1, ['--serial', '41', '--servers', 'basic']);
    const homeB = freshB();
    expect(cli(homeB, ['bundle', 'apply', both, '--key', k1.pub, '--env', 'basic.SECRET_TOKEN=b', '--env', 'second.SECRET_TOKEN=b']).code).toBe(0);
    // The operator takes 'second' out of servers.json and its locks (there is no `remove`: "edit by hand") ...
    const servers = read(homeB, 'servers.json');
    delete servers.servers.second;
    fs.writeFileSync(path.join(homeB, 'servers.json'), JSON.stringify(servers, null, 2) + '\n');
    for (const f of ['tools.lock', 'warden.lock'] as const) {
      const lock = read(homeB, f);
      delete lock.servers.second;
      fs.writeFileSync(path.join(homeB, f), JSON.stringify(lock, null, 2) + '\n');
    }
    // ... and adds a server of its own under that id.
    ownServer(homeB, 'second');
    const own = read(homeB, 'servers.json').servers.second;
    const r = cli(homeB, ['bundle', 'apply', basicOnly, '--key', k1.pub]);
    expect(r.code, r.stderr).toBe(0);
    expect(read(homeB, 'servers.json').servers.second).toEqual(own);
  });
});
