import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPair, machine, sharedMachineA, signedBundle, snapshot, tempDir, type KeyPair } from '../bundle/helpers.js';
import { bundleEvents, fetchNow, metric, setFleet, startDaemon, waitFor, type RunningDaemon } from './fleet-helpers.js';

// Issue 15, the daemon: a fleet source that is a URL, served by a loopback HTTP server in the test (http is
// allowed for loopback hosts only). What the server does for each path is set by the test: serve files, redirect,
// hang, claim a huge body.

let root: string;
let homeA: string;
let homeB: string;
let key: KeyPair;
let daemon: RunningDaemon;
let server: http.Server;
let base: string;
const bundles: Record<string, string> = {};
/** What the server does now: serve these two files, or misbehave. */
let mode: { serve: string } | { hang: true } | { huge: true } | { loop: true } = { serve: '' };
let requests = 0;

beforeAll(async () => {
  root = tempDir('warden-fleet-url-');
  homeA = sharedMachineA(root).homeA;
  key = keyPair(root, 'signer');
  for (const [name, serial] of [['s100', 100], ['s300', 300]] as const) bundles[name] = signedBundle(homeA, path.join(root, `${name}.bundle.json`), key, ['--serial', String(serial)]);
  mode = { serve: bundles.s100 as string };
  server = http.createServer((req, res) => {
    requests++;
    const url = req.url ?? '';
    if ('hang' in mode) return; // never answers
    if ('huge' in mode) return void res.writeHead(200, { 'content-length': String(100 * 1024 * 1024) }).write('{');
    if ('loop' in mode) return void res.writeHead(302, { location: url }).end();
    // /moved/… redirects to /files/…, which serves the bundle or its signature.
    if (url.startsWith('/moved/')) return void res.writeHead(301, { location: url.replace('/moved/', '/files/') }).end();
    const file = url === '/files/setup.bundle.json' ? mode.serve : url === '/files/setup.bundle.json.sigstore.json' ? `${mode.serve}.sigstore.json` : undefined;
    if (!file) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(fs.readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  homeB = machine(root, 'B');
  setFleet(homeB, { source: { type: 'url', url: `${base}/moved/setup.bundle.json` }, key: key.pub, timeout: 2, env: { basic: { SECRET_TOKEN: 'machine-b-value' } } });
  daemon = await startDaemon(homeB);
});

afterAll(async () => {
  await daemon?.stop();
  server?.closeAllConnections();
  server?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

async function refusedWithNothingChanged(m: typeof mode, code: string, during?: () => Promise<void>): Promise<void> {
  const before = snapshot(homeB);
  mode = m;
  const seen = requests;
  const fetched = fetchNow(daemon, homeB);
  if (during) {
    await waitFor(() => requests > seen, () => 'the daemon to ask the server');
    await during();
  }
  const e = await fetched;
  expect(e, daemon.stderr()).toMatchObject({ event: 'bundle_rejected', reason: code, file: `${base}/moved/setup.bundle.json`, by: 'daemon fleet' });
  expect(snapshot(homeB)).toEqual(before);
  await waitFor(async () => (await metric(daemon.base, 'mcp_warden_bundles_rejected_total', `reason="${code}"`)) >= 1, () => `bundles_rejected_total{reason="${code}"}`);
}

describe('the daemon with a URL as its fleet source', () => {
  it('applies the bundle it fetches at start, through a redirect', async () => {
    await waitFor(() => bundleEvents(homeB).length > 0, () => `a bundle event\n${daemon.stderr()}`);
    expect(bundleEvents(homeB)[0]).toMatchObject({ event: 'bundle_applied', serial: 100, by: 'daemon fleet' });
    await waitFor(async () => (await metric(daemon.base, 'mcp_warden_bundle_serial')) === 100, () => 'bundle_serial 100');
  });

  it('keeps serving metrics and status while a fetch hangs, and gives up at the timeout', async () => {
    await refusedWithNothingChanged({ hang: true }, 'BUNDLE_FETCH_TIMEOUT', async () => {
      // The fetch is in flight and the server does not answer: the daemon still does.
      expect(await metric(daemon.base, 'mcp_warden_daemon_stalled_loops')).toBe(0);
      expect((await fetch(`${daemon.base}/status`)).status).toBe(200);
    });
    await waitFor(() => daemon.stderr().includes('took longer than 2 s'), () => `the daemon to say why\n${daemon.stderr()}`);
  });

  it('refuses a body larger than the cap from its Content-Length', async () => {
    await refusedWithNothingChanged({ huge: true }, 'BUNDLE_TOO_LARGE');
  });

  it('refuses a redirect loop after a bounded number of redirects', async () => {
    const seen = requests;
    await refusedWithNothingChanged({ loop: true }, 'BUNDLE_FETCH_FAILED');
    expect(requests - seen).toBeLessThanOrEqual(2 * 6);
    await waitFor(() => daemon.stderr().includes('more than 5 redirects'), () => `the daemon to say why\n${daemon.stderr()}`);
  });

  it('applies the next good bundle once the server serves it', async () => {
    mode = { serve: bundles.s300 as string };
    const e = await fetchNow(daemon, homeB);
    expect(e).toMatchObject({ event: 'bundle_applied', serial: 300, previousSerial: 100 });
  });
});
