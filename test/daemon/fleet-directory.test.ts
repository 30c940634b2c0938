import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, cli, connectClient } from '../helpers/warden.js';
import { keyPair, machine, sharedMachineA, signedBundle, snapshot, tempDir, type KeyPair } from '../bundle/helpers.js';
import { bundleEvents, fetchNow, metric, publish, setFleet, startDaemon, waitFor, type RunningDaemon } from './fleet-helpers.js';

// Issue 15, the daemon: a fleet source that is a directory (a shared mount). Machine A makes and signs bundles,
// machine B's daemon fetches them: it applies a good one, keeps the last good state (the trust files byte for
// byte) when the next one is bad, and records every refusal (audit, alert, metric).

let root: string;
let homeA: string;
let homeB: string;
let key: KeyPair;
let other: KeyPair;
let pub: string;
let published: string;
let daemon: RunningDaemon;
const bundles: Record<string, string> = {};

beforeAll(async () => {
  root = tempDir('warden-fleet-dir-');
  homeA = sharedMachineA(root).homeA;
  const r = cli(homeA, ['rules', 'basic', '--mode', 'strict', '--kind', 'echo=read']);
  if (r.code !== 0) throw new Error(r.stderr);
  key = keyPair(root, 'signer');
  other = keyPair(root, 'other');
  for (const [name, serial, k] of [['s100', 100, key], ['s300', 300, key], ['s50', 50, key], ['foreign', 200, other]] as const) {
    bundles[name] = signedBundle(homeA, path.join(root, `${name}.bundle.json`), k, ['--serial', String(serial)]);
  }
  pub = path.join(root, 'pub');
  fs.mkdirSync(pub, { mode: 0o755 });
  published = path.join(pub, 'setup.bundle.json');
  publish(bundles.s100 as string, published);
  homeB = machine(root, 'B');
  setFleet(homeB, { source: { type: 'directory', directory: pub, path: 'setup.bundle.json' }, key: key.pub, env: { basic: { SECRET_TOKEN: 'machine-b-value' } } });
  daemon = await startDaemon(homeB);
});

afterAll(async () => {
  await daemon?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

/** Publishes what `change` writes, fetches, and checks that it was refused with `code` and nothing changed. */
async function refusedWithNothingChanged(change: () => void, code: string): Promise<void> {
  const before = snapshot(homeB);
  const counted = await metric(daemon.base, 'mcp_warden_bundles_rejected_total', `reason="${code}"`);
  change();
  const e = await fetchNow(daemon, homeB);
  expect(e, daemon.stderr()).toMatchObject({ event: 'bundle_rejected', reason: code, file: published, by: 'daemon fleet' });
  expect(snapshot(homeB)).toEqual(before);
  await waitFor(async () => (await metric(daemon.base, 'mcp_warden_bundles_rejected_total', `reason="${code}"`)) === counted + 1, () => `bundles_rejected_total{reason="${code}"} to count it`);
  expect(await metric(daemon.base, 'mcp_warden_bundle_serial')).toBe(100);
  await waitFor(() => daemon.stderr().includes(`refused (${code})`), () => `the daemon to say refused (${code})`); // said after the alert
  expect(daemon.stderr()).not.toMatch(/\n\s+at /);
}

describe('the daemon with a directory as its fleet source', () => {
  it('applies the bundle it finds at start, and the server then runs on machine B with its env value', async () => {
    await waitFor(() => bundleEvents(homeB).length > 0, () => `a bundle event\n${daemon.stderr()}`);
    expect(bundleEvents(homeB)[0]).toMatchObject({ event: 'bundle_applied', serial: 100, servers: ['basic'], by: 'daemon fleet', rollback: false });
    await waitFor(async () => (await metric(daemon.base, 'mcp_warden_bundle_serial')) === 100, () => 'bundle_serial 100');
    expect(await metric(daemon.base, 'mcp_warden_bundle_applied_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 120);
    const { client } = await connectClient(homeB, 'basic');
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo']); // A's rules travelled
    } finally {
      await client.close();
    }
    const servers = JSON.parse(fs.readFileSync(path.join(homeB, 'servers.json'), 'utf8'));
    expect(servers.servers.basic.env).toEqual({ SECRET_TOKEN: 'machine-b-value' });
    expect(servers.fleet.source.directory).toBe(pub); // the apply kept this machine's fleet section
  });

  it('keeps the last good state when the next bundle was tampered with', async () => {
    await refusedWithNothingChanged(() => {
      publish(bundles.s300 as string, published);
      fs.writeFileSync(published, fs.readFileSync(published, 'utf8').replace('"posture": "enforce"', '"posture": "monitor"'));
    }, 'BUNDLE_SIGNATURE_INVALID');
  });

  it('keeps the last good state when the next bundle was signed by another key', async () => {
    await refusedWithNothingChanged(() => publish(bundles.foreign as string, published), 'BUNDLE_UNTRUSTED_SIGNER');
  });

  it('refuses an older serial (a rollback is never applied by the daemon)', async () => {
    await refusedWithNothingChanged(() => publish(bundles.s50 as string, published), 'BUNDLE_ROLLBACK');
    expect(daemon.stderr()).toContain('The daemon never applies a rollback');
  });

  it('does nothing, and says nothing, when the source serves the bundle applied last', async () => {
    publish(bundles.s100 as string, published);
    const events = bundleEvents(homeB).length;
    const checked = await metric(daemon.base, 'mcp_warden_bundle_checked_timestamp_seconds');
    const before = snapshot(homeB);
    daemon.proc.kill('SIGHUP');
    await waitFor(async () => (await metric(daemon.base, 'mcp_warden_bundle_checked_timestamp_seconds')) > checked, () => `bundle_checked to move\n${daemon.stderr()}`);
    expect(bundleEvents(homeB)).toHaveLength(events);
    expect(snapshot(homeB)).toEqual(before);
  });

  it('refuses a bundle file others can write', async () => {
    await refusedWithNothingChanged(() => {
      publish(bundles.s300 as string, published);
      fs.chmodSync(published, 0o666);
    }, 'BUNDLE_SOURCE_INSECURE');
  });

  it('refuses a bundle file larger than the cap without reading it', async () => {
    await refusedWithNothingChanged(() => {
      publish(bundles.s300 as string, published);
      fs.truncateSync(published, 64 * 1024 * 1024 + 1);
    }, 'BUNDLE_TOO_LARGE');
  });

  it('refuses a signature that is a symbolic link', async () => {
    await refusedWithNothingChanged(() => {
      publish(bundles.s300 as string, published);
      fs.renameSync(`${published}.sigstore.json`, path.join(root, 'sig.json'));
      fs.symlinkSync(path.join(root, 'sig.json'), `${published}.sigstore.json`);
    }, 'BUNDLE_FETCH_FAILED');
  });

  it('keeps the last good state when the source has nothing to fetch', async () => {
    await refusedWithNothingChanged(() => {
      fs.rmSync(published);
      fs.rmSync(`${published}.sigstore.json`);
    }, 'BUNDLE_FETCH_FAILED');
  });

  it('applies the next good bundle, and never took its own apply for an outside edit', async () => {
    publish(bundles.s300 as string, published);
    const e = await fetchNow(daemon, homeB);
    expect(e).toMatchObject({ event: 'bundle_applied', serial: 300, previousSerial: 100 });
    await waitFor(async () => (await metric(daemon.base, 'mcp_warden_bundle_serial')) === 300, () => 'bundle_serial 300');
    expect(auditEvents(homeB).filter((x) => x.event === 'rules_changed' || x.event === 'config_invalid' || x.event === 'binary_changed')).toEqual([]);
    // the metrics name no path
    const text = await (await fetch(`${daemon.base}/metrics`)).text();
    expect(text).not.toContain(root);
  });
});
