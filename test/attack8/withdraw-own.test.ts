import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addServer, cli } from '../helpers/warden.js';
import { keyPair, machine, machineA, serverCopy, signedBundle, tempDir, type KeyPair } from '../bundle/helpers.js';

// attack8: the withdrawal (src/fleet/retire.ts) judges "brought by a bundle" by the server id alone. A server this
// machine added itself, which a bundle later named (the same id: two teams both call theirs "second"), counts as
// the bundle's from then on, and the next bundle that leaves it out deletes it, although docs/threat-model.md says
// a signer "can remove a server its previous bundle brought ..., never one the machine added itself".

let root: string;
let homeA: string;
let key: KeyPair;
let both: string;
let basicOnly: string;

const read = (home: string, file: string): Record<string, any> => JSON.parse(fs.readFileSync(path.join(home, file), 'utf8')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

beforeAll(() => {
  root = tempDir('warden-attack8-withdraw-');
  homeA = machineA(root, serverCopy(root));
  const dir = path.join(root, 'second');
  fs.mkdirSync(dir);
  addServer(homeA, 'second', ['node', serverCopy(dir)], ['--env', 'SECRET_TOKEN=a']);
  key = keyPair(root, 'signer');
  both = signedBundle(homeA, path.join(root, 'both.bundle.json'), key, ['--serial', '10']);
  basicOnly = signedBundle(homeA, path.join(root, 'basic-only.bundle.json'), key, ['--serial', '11', '--servers', 'basic']);
});

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('attack8: withdrawal and servers the machine added itself', () => {
  it('a server the machine added itself before a bundle named the same id is not deleted when a later bundle leaves that id out', () => {
    const homeB = machine(root, 'B');
    const ownDir = path.join(root, 'own-second');
    fs.mkdirSync(ownDir);
    addServer(homeB, 'second', ['node', serverCopy(ownDir)], ['--env', 'SECRET_TOKEN=machine-b-own']);
    expect(Object.keys(read(homeB, 'servers.json').servers)).toEqual(['second']);

    const first = cli(homeB, ['bundle', 'apply', both, '--key', key.pub, '--env', 'basic.SECRET_TOKEN=b']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);

    const next = cli(homeB, ['bundle', 'apply', basicOnly, '--key', key.pub]);
    expect(next.code, next.stderr).toBe(0);
    // The machine's own "second" existed before any bundle: leaving it out of a bundle is not a revocation of it.
    expect(Object.keys(read(homeB, 'servers.json').servers).sort()).toEqual(['basic', 'second']);
  });
});
