import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient } from '../helpers/warden.js';
import { keyPair, machine, sharedMachineA, signedBundle, snapshot, tempDir, type KeyPair } from '../bundle/helpers.js';
import { bundleEvents, fetchNow, metric, publish, setFleet, startDaemon, waitFor, type RunningDaemon } from './fleet-helpers.js';

// Issue 15, the daemon: a fleet source that is a git repository (a bare one on the local disk standing in for the
// team's git host). Each bundle is pushed as a commit; the daemon fetches the branch through the `git` program.

let root: string;
let homeA: string;
let homeB: string;
let key: KeyPair;
let bare: string;
let work: string;
let daemon: RunningDaemon;
const bundles: Record<string, string> = {};

const git = (cwd: string, ...args: string[]): string => execFileSync('git', ['-c', 'user.name=CI', '-c', 'user.email=ci@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Commits the bundle (and its signature) as fleet/setup.bundle.json, after `change` edits it, and pushes. */
function push(bundle: string, change: (file: string) => void = () => {}): void {
  const dest = path.join(work, 'fleet', 'setup.bundle.json');
  publish(bundle, dest);
  change(dest);
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '--allow-empty', '-m', `publish ${path.basename(bundle)}`);
  git(work, 'push', '-q', 'origin', 'HEAD:refs/heads/main');
}

beforeAll(async () => {
  root = tempDir('warden-fleet-git-');
  homeA = sharedMachineA(root).homeA;
  key = keyPair(root, 'signer');
  for (const [name, serial] of [['s100', 100], ['s300', 300]] as const) bundles[name] = signedBundle(homeA, path.join(root, `${name}.bundle.json`), key, ['--serial', String(serial)]);
  bare = path.join(root, 'trust.git');
  git(root, 'init', '-q', '--bare', bare);
  work = path.join(root, 'work');
  git(root, 'init', '-q', work);
  git(work, 'remote', 'add', 'origin', bare);
  push(bundles.s100 as string);
  homeB = machine(root, 'B');
  setFleet(homeB, { source: { type: 'git', remote: bare, path: 'fleet/setup.bundle.json', ref: 'main' }, key: key.pub, env: { basic: { SECRET_TOKEN: 'machine-b-value' } } });
  daemon = await startDaemon(homeB);
});

afterAll(async () => {
  await daemon?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

async function refusedWithNothingChanged(change: () => void, code: string): Promise<void> {
  const before = snapshot(homeB);
  change();
  const e = await fetchNow(daemon, homeB);
  expect(e, daemon.stderr()).toMatchObject({ event: 'bundle_rejected', reason: code, file: `git ${bare} main:fleet/setup.bundle.json`, by: 'daemon fleet' });
  expect(snapshot(homeB)).toEqual(before);
  await waitFor(async () => (await metric(daemon.base, 'mcp_warden_bundles_rejected_total', `reason="${code}"`)) >= 1, () => `bundles_rejected_total{reason="${code}"}`);
}

describe('the daemon with a git repository as its fleet source', () => {
  it('applies the bundle of the branch at start, and the server then runs on machine B', async () => {
    await waitFor(() => bundleEvents(homeB).length > 0, () => `a bundle event\n${daemon.stderr()}`);
    expect(bundleEvents(homeB)[0]).toMatchObject({ event: 'bundle_applied', serial: 100, servers: ['basic'], by: 'daemon fleet' });
    const { client } = await connectClient(homeB, 'basic');
    try {
      const res = (await client.callTool({ name: 'env', arguments: { name: 'SECRET_TOKEN' } })) as { content: { text: string }[] };
      expect(JSON.parse(res.content[0]?.text ?? '{}')).toMatchObject({ SECRET_TOKEN: 'machine-b-value' });
    } finally {
      await client.close();
    }
    // The scratch clone is gone once the round is over.
    await waitFor(() => fs.readdirSync(path.join(homeB, 'cache')).every((n) => !n.startsWith('fleet-')), () => 'the scratch directory to be removed');
  });

  it('keeps the last good state when the next commit carries a tampered bundle', async () => {
    await refusedWithNothingChanged(() => push(bundles.s300 as string, (f) => fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace('"posture": "enforce"', '"posture": "monitor"'))), 'BUNDLE_SIGNATURE_INVALID');
  });

  it('keeps the last good state when the commit has no signature beside the bundle', async () => {
    await refusedWithNothingChanged(() => push(bundles.s300 as string, (f) => fs.rmSync(`${f}.sigstore.json`)), 'BUNDLE_FETCH_FAILED');
    await waitFor(() => daemon.stderr().includes('the commit has no signature at fleet/setup.bundle.json.sigstore.json'), () => `the daemon to say why\n${daemon.stderr()}`);
  });

  it('keeps the last good state when the repository cannot be reached', async () => {
    const moved = `${bare}.moved`;
    try {
      await refusedWithNothingChanged(() => fs.renameSync(bare, moved), 'BUNDLE_FETCH_FAILED');
      await waitFor(() => /git fetch exited with 128/.test(daemon.stderr()), () => `the daemon to say why\n${daemon.stderr()}`);
    } finally {
      fs.renameSync(moved, bare);
    }
  });

  it('applies the next good commit', async () => {
    push(bundles.s300 as string);
    const e = await fetchNow(daemon, homeB);
    expect(e).toMatchObject({ event: 'bundle_applied', serial: 300, previousSerial: 100 });
    await waitFor(async () => (await metric(daemon.base, 'mcp_warden_bundle_serial')) === 300, () => 'bundle_serial 300');
  });
});
