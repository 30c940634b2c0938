import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRUSTED_PATH } from '../helpers/warden.js';
import { keyPair, machine, machineA, serverCopy, signedBundle, tempDir, type KeyPair } from '../bundle/helpers.js';
import { bundleEvents, publish, setFleet, startDaemon, waitFor, type RunningDaemon } from '../daemon/fleet-helpers.js';

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

const git = (cwd: string, ...args: string[]): string => execFileSync('git', ['-c', 'user.name=CI', '-c', 'user.email=ci@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

beforeAll(async () => {
  root = tempDir('warden-attack8-gitbin-');
  const homeA = machineA(root, serverCopy(root));
  const key: KeyPair = keyPair(root, 'signer');
  const bundle = signedBundle(homeA, path.join(root, 's100.bundle.json'), key, ['--serial', '100']);
  const bare = path.join(root, 'trust.git');
  git(root, 'init', '-q', '--bare', bare);
  const work = path.join(root, 'work');
  git(root, 'init', '-q', work);
  git(work, 'remote', 'add', 'origin', bare);
  publish(bundle, path.join(work, 'fleet', 'setup.bundle.json'));
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'publish');
  git(work, 'push', '-q', 'origin', 'HEAD:refs/heads/main');

  // A directory on the trusted PATH that anyone on the host can write, and a `git` someone else put there: it
  // leaves a mark and hands over to the real git, so nothing else looks different.
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const shared = path.join(root, 'shared-bin');
  fs.mkdirSync(shared);
  fs.chmodSync(shared, 0o777);
  marker = path.join(root, 'planted-git-ran');
  fs.writeFileSync(path.join(shared, 'git'), `#!/bin/sh\necho "$(id -u)" >> '${marker}'\nexec '${realGit}' "$@"\n`, { mode: 0o777 });
  fs.chmodSync(path.join(shared, 'git'), 0o777);

  homeB = machine(root, 'B');
  const serversFile = path.join(homeB, 'servers.json');
  const servers = JSON.parse(fs.readFileSync(serversFile, 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(serversFile, JSON.stringify({ ...servers, path: `${shared}:${TRUSTED_PATH}` }, null, 2) + '\n', { mode: 0o600 });
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
