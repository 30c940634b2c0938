import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SERVER, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { auditEvents, cli, tempDir } from '../helpers/warden.js';

// `upgrade` tries the next version in a staging home inside the real home's cache (src/enroll/npm/staging.ts) and
// removes it when it ends. An upgrade that did not end (killed, crashed, the machine went down) leaves it there,
// with what the new version did in its audit log. The next install or upgrade, under the store lock (which every
// upgrade holds while it stages), sweeps the ones older than an hour, carrying their events into the real audit log
// marked staged; a recent one is left alone.

const HOUR = 60 * 60 * 1000;
const T = 180_000;
let dir: string;
let reg: ProvenanceRegistry;
let home: string;

beforeAll(async () => {
  dir = tempDir('warden-sweep-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
}, T);
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** A staging home as a crashed upgrade leaves it (a staged launch in its audit log), last written `age` ms ago. */
function leftStaging(name: string, age: number): string {
  const staging = path.join(home, 'cache', `upgrade-staging-${name}`);
  fs.mkdirSync(path.join(staging, 'cache'), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(staging, 'audit.log'), JSON.stringify({ ts: new Date().toISOString(), prev: null, event: 'launch', server: DEMO_SERVER, decision: 'allow', reason: `left by ${name}` }) + '\n', { mode: 0o600 });
  fs.writeFileSync(path.join(staging, 'servers.json'), '{"version":1,"servers":{}}\n', { mode: 0o600 });
  const then = new Date(Date.now() - age);
  for (const f of ['audit.log', 'servers.json', 'cache', '.']) fs.utimesSync(path.join(staging, f), then, then);
  return staging;
}

const staged = (name: string) => auditEvents(home).filter((e) => e.staged === true && e.reason === `left by ${name}`);

describe('a staging home a crashed upgrade left in the cache', () => {
  it('is swept by the next install when older than an hour, its events carried into the audit log as staged; a recent one stays', () => {
    const old = leftStaging('old-install', 2 * HOUR);
    const recent = leftStaging('recent-install', 5 * 60 * 1000);
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--yes'], { env: reg.env });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(fs.existsSync(old)).toBe(false);
    expect(staged('old-install')).toEqual([expect.objectContaining({ event: 'launch', server: DEMO_SERVER, staged: true })]);
    expect(fs.existsSync(recent)).toBe(true);
    expect(staged('recent-install')).toEqual([]);
  }, T);

  it('is swept by the next upgrade when older than an hour, also one that is not let stage its own', () => {
    const old = leftStaging('old-upgrade', 2 * HOUR);
    reg.publish(DEMO_SERVER, '1.1.0');
    const r = cli(home, ['upgrade', 'demo-server'], { env: reg.env }); // no --yes, no terminal: nothing is run
    expect(r.code, r.stderr + r.stdout).toBe(1);
    expect(fs.existsSync(old)).toBe(false);
    expect(staged('old-upgrade')).toHaveLength(1);
  }, T);
});
