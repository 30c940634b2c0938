import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addServer, auditEvents, cli } from '../helpers/warden.js';
import { keyPair, machine, serverCopy, sharedMachineA, signedBundle, snapshot, tempDir, type KeyPair } from '../bundle/helpers.js';
import { readHomeJson as read } from '../helpers/json-docs.js';

// attack8: the withdrawal (src/fleet/retire.ts) judges "brought by a bundle" by the server id alone. A server this
// machine added itself, which a bundle later named (the same id: two teams both call theirs "second"), counts as
// the bundle's from then on, and the next bundle that leaves it out deletes it, although docs/threat-model.md says
// a signer "can remove a server its previous bundle brought ..., never one the machine added itself".

let root: string;
let homeA: string;
let key: KeyPair;
let both: string;
let basicOnly: string;


beforeAll(() => {
  root = tempDir('warden-attack8-withdraw-');
  homeA = sharedMachineA(root).homeA;
  const dir = path.join(root, 'second');
  fs.mkdirSync(dir);
  addServer(homeA, 'second', ['node', serverCopy(dir)], ['--env', 'SECRET_TOKEN=a']);
  key = keyPair(root, 'signer');
  both = signedBundle(homeA, path.join(root, 'both.bundle.json'), key, ['--serial', '10']);
  basicOnly = signedBundle(homeA, path.join(root, 'basic-only.bundle.json'), key, ['--serial', '11', '--servers', 'basic']);
});

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('attack8: withdrawal and servers the machine added itself', () => {
  it('a bundle naming a server the machine added itself is refused with nothing changed, so a later bundle that leaves the id out cannot delete it', () => {
    const homeB = machine(root, 'B');
    const ownDir = path.join(root, 'own-second');
    fs.mkdirSync(ownDir);
    addServer(homeB, 'second', ['node', serverCopy(ownDir)], ['--env', 'SECRET_TOKEN=machine-b-own']);
    const before = snapshot(homeB);

    const first = cli(homeB, ['bundle', 'apply', both, '--key', key.pub, '--env', 'basic.SECRET_TOKEN=b']);
    expect(first.stderr).toMatch(/BUNDLE_SERVER_CONFLICT: .*names 'second', which this machine configured itself.*--adopt second/);
    expect(first.code).toBe(3);
    expect(snapshot(homeB)).toEqual(before);

    // Without 'second', the fleet's other server applies, and the next bundle leaves the machine's own alone.
    expect(cli(homeB, ['bundle', 'apply', basicOnly, '--key', key.pub, '--env', 'basic.SECRET_TOKEN=b']).code).toBe(0);
    expect(Object.keys(read(homeB, 'servers.json').servers).sort()).toEqual(['basic', 'second']);
    expect(read(homeB, 'servers.json').servers.second?.args[0]).toContain('own-second');
  });

  it('handed over with --adopt, the server follows the fleet: replaced now, removed when a later bundle leaves it out', () => {
    const homeB = machine(root, 'B2');
    const ownDir = path.join(root, 'own-second-2');
    fs.mkdirSync(ownDir);
    addServer(homeB, 'second', ['node', serverCopy(ownDir)], ['--env', 'SECRET_TOKEN=machine-b-own']);
    const first = cli(homeB, ['bundle', 'apply', both, '--key', key.pub, '--env', 'basic.SECRET_TOKEN=b', '--adopt', 'second']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(auditEvents(homeB).at(-1)).toMatchObject({ event: 'bundle_applied', adopted: ['second'] });
    expect(read(homeB, 'servers.json').servers.second?.args[0]).not.toContain('own-second');
    expect(cli(homeB, ['bundle', 'apply', basicOnly, '--key', key.pub]).code).toBe(0);
    expect(Object.keys(read(homeB, 'servers.json').servers)).toEqual(['basic']);
  });
});
