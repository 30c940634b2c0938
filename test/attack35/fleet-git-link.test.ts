import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pinByHand } from '../helpers/pin-by-hand.js';
import { addServerWarm } from '../helpers/warm-digest.js';
import { NODE, SERVERS } from '../helpers/warden.js';
import { keyPair, machine, sharedMachineA, signedBundle, tempDir, type KeyPair } from '../bundle/helpers.js';
import { bundleEvents, gitFleetRepo, plantGit, setFleet, startDaemon, trustedPathFirst, waitFor, type RunningDaemon } from '../daemon/fleet-helpers.js';

// review 12: the daemon's git lookup (src/daemon/fleet.ts configure -> ungrantedPath, src/fleet/fetch-git.ts
// findGit) skips a directory of the trusted path that a server's write grant reaches, by its name only. The engine
// lookup (src/sandbox/engine.ts findTrusted) also refuses a bwrap whose realpath a write grant reaches ("a link to a
// server's file"); findGit takes `dir/git` as it finds it, a link included (the usual layout of ~/.local/bin,
// /usr/local/bin with stow or a package manager's links). A confined server whose write grant holds the link's
// target (not on the trusted path, so the grant policy admits it) writes the git the unconfined daemon runs.
// Asserts that the daemon never runs a git whose realpath a server's write grant reaches: the real git fetches.

let root: string;
let homeB: string;
let marker: string;
let daemon: RunningDaemon;

beforeAll(async () => {
  root = tempDir('warden-attack35-gitlink-');
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

  // On the trusted path: a directory no server may write, holding only a link to the granted directory's git.
  const links = path.join(root, 'links-bin');
  fs.mkdirSync(links, { mode: 0o755 });
  fs.symlinkSync(path.join(granted, 'git'), path.join(links, 'git'));

  homeB = machine(root, 'B');
  addServerWarm(homeB, 'writer', [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]);
  await pinByHand(homeB, 'writer', { network: 'none', write: [granted], read: { allow: [], deny: [] } });
  trustedPathFirst(homeB, links);
  setFleet(homeB, { source: { type: 'git', remote: bare, path: 'fleet/setup.bundle.json', ref: 'main' }, key: key.pub, env: { basic: { SECRET_TOKEN: 'machine-b-value' } } });
  daemon = await startDaemon(homeB);
});

afterAll(async () => {
  await daemon?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

describe("the git of a git fleet source, a link on the trusted path to a file a server's write grant reaches", () => {
  it('is never run: the daemon looks git up past that link and fetches with the real one', async () => {
    await waitFor(() => bundleEvents(homeB).length > 0, () => `a bundle event\n${daemon.stderr()}`);
    expect(fs.existsSync(marker), `the planted git ran ${fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8').trim().split('\n').length : 0} time(s) as the daemon's user`).toBe(false);
    expect(bundleEvents(homeB)[0]).toMatchObject({ event: 'bundle_applied' });
  });
});
