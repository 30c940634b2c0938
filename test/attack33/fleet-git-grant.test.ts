import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pinByHand } from '../helpers/pin-by-hand.js';
import { addServerWarm } from '../helpers/warm-digest.js';
import { NODE, SERVERS } from '../helpers/warden.js';
import { keyPair, machine, sharedMachineA, signedBundle, tempDir, type KeyPair } from '../bundle/helpers.js';
import { bundleEvents, gitFleetRepo, plantGit, setFleet, startDaemon, trustedPathFirst, waitFor, type RunningDaemon } from '../daemon/fleet-helpers.js';

// The daemon runs the first `git` of servers.json's trusted PATH (src/fleet/fetch-git.ts findGit), as the warden's
// user, and admits it when neither it nor a directory above it is writable by another user. A confined server
// writes as that same user: one whose write grant reaches a directory of the trusted path (granted before the
// directory joined the path, or pinned by an earlier version; the launch refuses such a grant now, but a server
// launched before may be running, and its file stays) supplies the git the daemon runs, outside every sandbox.
// Asserts that the daemon never looks git up in a directory a server's write grant reaches: the real git fetches.

let root: string;
let homeB: string;
let marker: string;
let daemon: RunningDaemon;

beforeAll(async () => {
  root = tempDir('warden-attack33-gitgrant-');
  const homeA = sharedMachineA(root).homeA;
  const key: KeyPair = keyPair(root, 'signer');
  const bundle = signedBundle(homeA, path.join(root, 's100.bundle.json'), key, ['--serial', '100']);
  const bare = gitFleetRepo(root, bundle);

  // A directory only the warden's user can write, granted to a confined server, which wrote a `git` there that
  // leaves a mark and hands over to the real one.
  const granted = path.join(root, 'granted-bin');
  fs.mkdirSync(granted, { mode: 0o755 });
  marker = path.join(root, 'planted-git-ran');
  plantGit(granted, marker, 0o755);

  homeB = machine(root, 'B');
  addServerWarm(homeB, 'writer', [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]);
  await pinByHand(homeB, 'writer', { network: 'none', write: [granted], read: { allow: [], deny: [] } });
  trustedPathFirst(homeB, granted);
  setFleet(homeB, { source: { type: 'git', remote: bare, path: 'fleet/setup.bundle.json', ref: 'main' }, key: key.pub, env: { basic: { SECRET_TOKEN: 'machine-b-value' } } });
  daemon = await startDaemon(homeB);
});

afterAll(async () => {
  await daemon?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

describe("the git of a git fleet source, in a directory a server's write grant reaches", () => {
  it('is never run: the daemon looks git up past that directory and fetches with the real one', async () => {
    await waitFor(() => bundleEvents(homeB).length > 0, () => `a bundle event\n${daemon.stderr()}`);
    expect(fs.existsSync(marker), `the planted git ran ${fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8').trim().split('\n').length : 0} time(s) as the daemon's user`).toBe(false);
    expect(bundleEvents(homeB)[0]).toMatchObject({ event: 'bundle_applied' });
  });
});
