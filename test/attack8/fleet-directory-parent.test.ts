import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPair, machine, sharedMachineA, signedBundle, snapshot, tempDir, type KeyPair } from '../bundle/helpers.js';
import { bundleEvents, publish, setFleet, startDaemon, waitFor, type RunningDaemon } from '../daemon/fleet-helpers.js';

// attack8: a directory source is refused when the bundle, its signature or a directory from the configured one
// down is writable by group or others (BUNDLE_SOURCE_INSECURE: "a file anyone on the host can write would let any
// local user withhold updates", ADR 0025). The directories above the configured one are not looked at: when one
// of them is writable by others (no sticky bit), any local user can rename the configured directory away and put
// their own in its place (the owner is deliberately not checked), serving the bundle applied last forever: a
// silent freeze, no event, no alert until the stale alert two days later. checkHomeChain (store/perms.ts) checks
// the home's ancestors for exactly this reason.

let root: string;
let homeB: string;
let daemon: RunningDaemon;

beforeAll(async () => {
  root = tempDir('warden-attack8-dirparent-');
  const homeA = sharedMachineA(root).homeA;
  const key: KeyPair = keyPair(root, 'signer');
  const bundle = signedBundle(homeA, path.join(root, 's100.bundle.json'), key, ['--serial', '100']);
  const shared = path.join(root, 'shared'); // a mount point or share root anyone can write, without the sticky bit
  fs.mkdirSync(shared);
  fs.chmodSync(shared, 0o777);
  const pub = path.join(shared, 'fleet'); // the configured directory: its own mode is right
  fs.mkdirSync(pub, { mode: 0o755 });
  publish(bundle, path.join(pub, 'setup.bundle.json'));
  homeB = machine(root, 'B');
  setFleet(homeB, { source: { type: 'directory', directory: pub, path: 'setup.bundle.json' }, key: key.pub, env: { basic: { SECRET_TOKEN: 'machine-b-value' } } });
  daemon = await startDaemon(homeB);
});

afterAll(async () => {
  await daemon?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('attack8: the directories above a directory source', () => {
  it('the daemon refuses a directory source whose parent directory others can write (BUNDLE_SOURCE_INSECURE), changing nothing', async () => {
    const before = snapshot(homeB);
    await waitFor(() => bundleEvents(homeB).length > 0, () => `a bundle event\n${daemon.stderr()}`);
    expect(bundleEvents(homeB)[0], daemon.stderr()).toMatchObject({ event: 'bundle_rejected', reason: 'BUNDLE_SOURCE_INSECURE', by: 'daemon fleet' });
    expect(snapshot(homeB)).toEqual(before);
  });
});
