import { createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { machine, machineA, keyPair, serverCopy, signedBundle, snapshot, tempDir, type KeyPair } from '../bundle/helpers.js';

// attack7: "apply half a bundle". docs/bundles.md: the trust files are replaced "all in one step"; ADR 0023:
// "Apply is one step". The five files are five separate atomic renames: a failure (ENOSPC, EIO, a kill) after
// the first and before the last leaves a home with the new servers.json and allowlist, the old locks and the
// old serial. Simulated here by making the fourth write fail, in process.

let failOn: string | undefined;
vi.mock('../../src/store/atomic.js', async (orig) => {
  const real = await orig<typeof import('../../src/store/atomic.js')>();
  return {
    ...real,
    writeAtomic: (file: string, data: string | Buffer): void => {
      if (failOn !== undefined && path.basename(file) === failOn) throw Object.assign(new Error(`ENOSPC: no space left on device, write '${file}'`), { code: 'ENOSPC' });
      real.writeAtomic(file, data);
    },
  };
});

let root: string;
let key: KeyPair;
let bundle: string;

beforeAll(() => {
  root = tempDir('warden-attack7-half-');
  const script = serverCopy(root);
  const homeA = machineA(root, script);
  key = keyPair(root, 'signer');
  bundle = signedBundle(homeA, path.join(root, 'setup.bundle.json'), key);
});

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('attack7: no half-applied bundle', () => {
  it('a write that fails part-way through apply leaves every trust file as it was (no new servers.json with the old locks and serial)', async () => {
    const { applyBundle } = await import('../../src/fleet/apply.js');
    const { resolveHome } = await import('../../src/store/paths.js');
    const { openHome } = await import('../../src/store/home.js');
    const homeB = machine(root, 'B');
    const paths = resolveHome(homeB);
    openHome(paths, true);
    const before = snapshot(homeB);
    failOn = 'warden.lock';
    const policy = { key: createPublicKey(fs.readFileSync(key.pub, 'utf8')), keyFile: key.pub };
    await expect(applyBundle(paths, bundle, policy, { allowRollback: false, env: { basic: { SECRET_TOKEN: 'x' } }, now: new Date() })).rejects.toThrow(/ENOSPC/);
    failOn = undefined;
    expect(snapshot(homeB)).toEqual(before);
  });
});
