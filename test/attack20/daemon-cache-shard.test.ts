import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVERS, WARDEN, addServer, cli, tempDir } from '../helpers/warden.js';

// ADR 0034 makes the digest cache a file per server so that one server's cache is that server's business: "with
// another server's file made garbage, a server still launches from its own, and the other is refused naming its
// file". The daemon's attestation round (attestation-worker.ts) loads each server's file outside attestServer's
// try: one invalid file throws out of the worker, the whole round is lost ("re-attesting ... failed", a line on
// stderr, no event), and no server of the round gets a state or a watch. A daemon started on a home where one
// server's cache file is invalid watches none of the others: a replaced executable of a good server raises no
// binary_changed.

let home: string;
let daemon: ChildProcessWithoutNullStreams | undefined;
let stderr = '';

beforeAll(async () => {
  home = tempDir();
  expect(addServer(home, 'good', [process.execPath, path.join(SERVERS, 'basic.mjs')]).code).toBe(0);
  expect(addServer(home, 'garbled', [process.execPath, path.join(SERVERS, 'noisy.mjs')]).code).toBe(0);
  const garbled = path.join(home, 'cache', 'digests.garbled.json');
  expect(fs.existsSync(garbled)).toBe(true);
  fs.writeFileSync(garbled, '{"version":1,"entries":'); // not JSON: a trust file that must be refused, by name
  daemon = spawn(process.execPath, [WARDEN, '--home', home, 'daemon', '--listen', '127.0.0.1:0'], { stdio: ['pipe', 'pipe', 'pipe'] });
  daemon.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  // The daemon says it watches once its first attestation round is over (daemon.ts: checkAll before serving).
  const deadline = Date.now() + 20_000;
  while (!/watching \d+ directories/.test(stderr)) {
    if (daemon.exitCode !== null || Date.now() > deadline) throw new Error(`the daemon did not become ready\nstderr: ${stderr}`);
    await new Promise<void>((r) => {
      const t = setTimeout(r, Math.max(0, deadline - Date.now()));
      daemon?.stderr.once('data', () => (clearTimeout(t), r()));
    });
  }
});

afterAll(async () => {
  daemon?.kill('SIGTERM');
  if (daemon && daemon.exitCode === null) await new Promise((r) => daemon?.once('exit', r));
  fs.rmSync(home, { recursive: true, force: true });
});

describe("the daemon with one server's digest cache file invalid", () => {
  it('still attests (and so watches) every other server, and refuses that one naming its file', () => {
    const r = cli(home, ['status', '--json']);
    const view = JSON.parse(r.stdout) as { daemon: { running: boolean }; servers: { id: string; daemon?: { attestation: { state: string } | null } }[] };
    expect(view.daemon.running).toBe(true);
    const state = (id: string): string | null | undefined => view.servers.find((s) => s.id === id)?.daemon?.attestation?.state ?? null;
    expect({ good: state('good'), garbled: state('garbled'), stderr }).toEqual({ good: 'allowed', garbled: 'FILE_NOT_JSON', stderr: expect.stringContaining('digests.garbled.json') });
  });
});
