import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { variant } from '../attack4/common.js';
import { DEMO_DEP, DEMO_SERVER, startProvenanceRegistry, type ProvenanceRegistry, type Published } from '../helpers/provenance-registry.js';
import { auditEvents, cli, type CliResult } from '../helpers/warden.js';
import { keyPair, machine, snapshot, tempDir, type KeyPair } from './helpers.js';

// Two machines with servers installed into the sealed store (docs/adr/0029): the loopback registry stand-in
// (test/helpers/provenance-registry.ts) serves the fixture packages, signed by a local test sigstore instance both
// homes trust; machine A installs from it, creates and signs bundles; each machine B is a fresh home that trusts
// the same sigstore instance and reaches the same registry. Nothing reaches the network.

export { DEMO_DEP, DEMO_SERVER };

/** The store entry name of a published tarball (name@version-<12 hex of its sha512>). */
export function entryOf(name: string, version: string, tarball: Buffer): string {
  return `${name.replace('/', '+')}@${version}-${crypto.createHash('sha512').update(tarball).digest('hex').slice(0, 12)}`;
}

export interface StoreMachines {
  dir: string;
  reg: ProvenanceRegistry;
  homeA: string;
  key: KeyPair;
  /** A fresh machine B: its own home, trusting the registry's sigstore instance. */
  freshB(): string;
  /** `mcp-warden ARGS` on `home` with npm pointed at the registry stand-in. */
  run(home: string, args: string[]): CliResult;
  /** `bundle create --servers IDS` + `bundle sign` on A. */
  signed(name: string, servers: string[], serial?: number): string;
  close(): Promise<void>;
}

/** The registry stand-in and machine A, with demo-server 1.0.0 (and its dependency demo-dep 1.0.0) installed. */
export async function storeMachines(prefix: string): Promise<StoreMachines> {
  const dir = tempDir(prefix);
  const reg = await startProvenanceRegistry(dir);
  const run = (home: string, args: string[]): CliResult => cli(home, args, { env: reg.env });
  const homeA = machine(dir, 'A');
  reg.trustHome(homeA);
  const installed = run(homeA, ['install', DEMO_SERVER, '--yes']);
  if (installed.code !== 0) throw new Error(`install on A failed (${installed.code}): ${installed.stderr}`);
  const key = keyPair(dir, 'signer');
  let n = 0;
  return {
    dir,
    reg,
    homeA,
    key,
    freshB() {
      const home = machine(dir, `B${++n}`);
      reg.trustHome(home);
      return home;
    },
    run,
    signed(name, servers, serial) {
      const out = path.join(dir, `${name}.bundle.json`);
      const c = run(homeA, ['bundle', 'create', '--out', out, '--servers', servers.join(','), ...(serial !== undefined ? ['--serial', String(serial)] : [])]);
      if (c.code !== 0) throw new Error(`bundle create failed (${c.code}): ${c.stderr}`);
      const s = run(homeA, ['bundle', 'sign', out, '--key', key.priv]);
      if (s.code !== 0) throw new Error(`bundle sign failed (${s.code}): ${s.stderr}`);
      return out;
    },
    async close() {
      await reg.close();
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

/** demo-server VERSION whose dependency on demo-dep is a range (^1.0.0), published with provenance. */
export function publishRanged(reg: ProvenanceRegistry, version: string): void {
  reg.publish(DEMO_SERVER, version, { tarball: variant(DEMO_SERVER, '1.0.0', { version, dependencies: { [DEMO_DEP]: '^1.0.0' } }) });
}

/** demo-dep 1.0.1: the same module under a newer version, one a range ^1.0.0 admits. */
export function publishNewerDependency(reg: ProvenanceRegistry): Published {
  return reg.publish(DEMO_DEP, '1.0.1', { tarball: variant(DEMO_DEP, '1.0.0', { version: '1.0.1' }) });
}

/** The names in a home's store (entries, and half-made `.tmp-` ones; the store's own lock is left out). */
export function storeNames(home: string): string[] {
  const store = path.join(home, 'store');
  return fs.existsSync(store) ? fs.readdirSync(store).filter((n) => !n.startsWith('.lock')).sort() : [];
}

/** Applies FILE on HOME, which must refuse it with CODE (exit 3) and change no trust file and no store entry. */
export function refusedWithNothingChanged(m: StoreMachines, home: string, file: string, flags: string[], code: string): string {
  const before = snapshot(home);
  const store = storeNames(home);
  const r = m.run(home, ['bundle', 'apply', file, '--key', m.key.pub, ...flags]);
  expect(r.stderr).toContain(code);
  expect(r.code).toBe(3);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  expect(snapshot(home)).toEqual(before);
  expect(storeNames(home)).toEqual(store);
  expect(auditEvents(home).at(-1)).toMatchObject({ event: 'bundle_rejected', reason: code });
  return r.stderr;
}
