import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPair, machine, sharedMachineA, signedBundle, tempDir, type KeyPair } from '../bundle/helpers.js';
import { bundleEvents, gitFleetRepo, plantGit, setFleet, startDaemon, trustedPathFirst, waitFor, type RunningDaemon } from '../daemon/fleet-helpers.js';

// attack8: the daemon runs the first `git` of servers.json's trusted PATH (src/fleet/fetch-git.ts findGit) at every
// interval, as the daemon's user, and checks nothing about it but the execute bit. Every other program the warden
// runs from that PATH is digested and must be allowlisted (a planted `node` is refused); git is not, so whoever
// can write a directory of the trusted PATH (a group-writable /usr/local/bin, a world-writable tool directory)
// gets code run by the daemon. The trust files are held to sshd's StrictModes (store/perms.ts); the git the daemon
// executes is held to nothing.

let root: string;
let homeB: string;
let marker: string;
let daemon: RunningDaemon;

beforeAll(async () => {
  root = tempDir('warden-attack8-gitbin-');
  const homeA = sharedMachineA(root).homeA;
  const key: KeyPair = keyPair(root, 'signer');
  const bundle = signedBundle(homeA, path.join(root, 's100.bundle.json'), key, ['--serial', '100']);
  const bare = gitFleetRepo(root, bundle);

  // A directory on the trusted PATH that anyone on the host can write, and a `git` someone else put there: it
  // leaves a mark and hands over to the real git, so nothing else looks different.
  const shared = path.join(root, 'shared-bin');
  fs.mkdirSync(shared);
  fs.chmodSync(shared, 0o777);
  marker = path.join(root, 'planted-git-ran');
  plantGit(shared, marker, 0o777);
  fs.chmodSync(path.join(shared, 'git'), 0o777);

  homeB = machine(root, 'B');
  trustedPathFirst(homeB, shared);
  setFleet(homeB, { source: { type: 'git', remote: bare, path: 'fleet/setup.bundle.json', ref: 'main' }, key: key.pub, env: { basic: { SECRET_TOKEN: 'machine-b-value' } } });
  daemon = await startDaemon(homeB);
});

afterAll(async () => {
  await daemon?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('attack8: the git program of a git fleet source', () => {
  it('the daemon does not run a git that a directory writable by others supplies (it refuses the source instead)', async () => {
    await waitFor(() => bundleEvents(homeB).length > 0, () => `a bundle event\n${daemon.stderr()}`);
    expect(fs.existsSync(marker), `the planted git ran ${fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8').trim().split('\n').length : 0} time(s) as the daemon's user`).toBe(false);
    expect(bundleEvents(homeB)[0]).toMatchObject({ event: 'bundle_rejected', by: 'daemon fleet' });
  });
});
