import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPair, machine, sharedMachineA, signedBundle, tempDir, type KeyPair } from '../bundle/helpers.js';
import { bundleEvents, fetchNow, publish, setFleet, startDaemon, waitFor, type RunningDaemon } from '../daemon/fleet-helpers.js';

// attack8: the serial a machine last applied is one number for every signer, and a bundle may carry any serial up
// to 2^53-1. Whoever steals the fleet's signing key publishes one bundle with serial 2^53-1; every daemon applies it
// (bundle_applied, one page). The fleet then does what a stolen key calls for: it pins a new key (fleet.key) and
// publishes a fresh bundle with it. Every host refuses that bundle as BUNDLE_ROLLBACK, at every interval, and the
// daemon never passes --allow-rollback: the thief's bundle stays in force on every host until a person applies a
// bundle by hand there, although the thief's key is no longer pinned anywhere. A key that was revoked keeps
// deciding what the fleet runs.

let root: string;
let homeB: string;
let thiefBundle: string;
let freshBundle: string;
let published: string;
let fresh: KeyPair;
let daemon: RunningDaemon;

beforeAll(async () => {
  root = tempDir('warden-attack8-serial-');
  const homeA = sharedMachineA(root).homeA;
  const stolen = keyPair(root, 'stolen');
  fresh = keyPair(root, 'fresh');
  freshBundle = signedBundle(homeA, path.join(root, 'fresh.bundle.json'), fresh); // serial: now, as bundle create gives it
  thiefBundle = signedBundle(homeA, path.join(root, 'thief.bundle.json'), stolen, ['--serial', String(Number.MAX_SAFE_INTEGER)]);
  const pub = path.join(root, 'pub');
  fs.mkdirSync(pub, { mode: 0o755 });
  published = path.join(pub, 'setup.bundle.json');
  publish(thiefBundle, published);
  homeB = machine(root, 'B');
  setFleet(homeB, { source: { type: 'directory', directory: pub, path: 'setup.bundle.json' }, key: stolen.pub, env: { basic: { SECRET_TOKEN: 'machine-b-value' } } });
  daemon = await startDaemon(homeB);
});

afterAll(async () => {
  await daemon?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('attack8: the serial across a change of the pinned signer', () => {
  it("a stolen key's bundle with the highest serial does not lock out the bundles of the key pinned after it", async () => {
    await waitFor(() => bundleEvents(homeB).length > 0, () => `a bundle event\n${daemon.stderr()}`);
    // The operator pins the new key (the thief's is revoked) and the fleet publishes a bundle signed with it.
    const file = path.join(homeB, 'servers.json');
    const servers = JSON.parse(fs.readFileSync(file, 'utf8')) as { fleet: Record<string, unknown> };
    fs.writeFileSync(file, JSON.stringify({ ...servers, fleet: { ...servers.fleet, key: fresh.pub } }, null, 2) + '\n', { mode: 0o600 });
    publish(freshBundle, published);
    const e = await fetchNow(daemon, homeB);
    expect(e, daemon.stderr()).toMatchObject({ event: 'bundle_applied', signer: expect.stringMatching(/^key /), signerChanged: true });
    expect(JSON.parse(fs.readFileSync(path.join(homeB, 'bundle-state.json'), 'utf8')).applied.serial).not.toBe(Number.MAX_SAFE_INTEGER);
  });
});
