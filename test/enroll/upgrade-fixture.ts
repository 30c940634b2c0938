import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { DEMO_SERVER, identityFor, packFixture, startProvenanceRegistry, type ProvenanceRegistry, type PublishOptions } from '../helpers/provenance-registry.js';
import { GITHUB_ISSUER, type Identity } from '../helpers/sigstore-pki.js';
import { treeSnapshot } from '../helpers/tree-snapshot.js';
import { member, readHomeJson, type AllowlistJson, type ServerJson } from '../helpers/json-docs.js';
import { cli, tempDir, type CliResult } from '../helpers/warden.js';

// `mcp-warden upgrade` and `mcp-warden outdated` end to end: the built CLI against the loopback registry
// stand-in, npm installing from it, a local test sigstore instance in each home's trust-root.json. Every home
// starts from a real `install` of demo-server 1.0.0; demo-server 1.1.0 (the same server plus a `reverse` tool) is
// then published in the form a test needs, the latest publish of a version replacing the one before.
// What each locally signed bundle stands for:
//   - genuine (the default of publish): the npm publish attestation is the registry's word that it accepted
//     exactly that tarball; the SLSA provenance is GitHub Actions' word that the release workflow of
//     github.com/mcp-warden-test/demo-server, at tag v<version>, built it. Both signed by the test instance the
//     homes trust, for the sha512 of the very tarball served: the same publisher's next release.
//   - "moved": genuinely signed by that same instance, but for a build by the release workflow of
//     github.com/mcp-warden-test-moved/demo-server: the project moved its repository, or someone else's
//     repository publishes under the name. Valid provenance, another publisher than the one pinned.
//   - "none": no attestations at all (a release without provenance, or a registry that strips them).
//   - "tampered": a genuine provenance whose statement was edited after signing (another source repository).
//   - "stale": the genuine release, with other bytes served as its tarball and the packument's sha512 left
//     naming the signed ones (bytes swapped on the way).
// This file holds what upgrade.test.ts and upgrade-other-homes.test.ts share: the releases, readers of a home's
// trust files, and the registry with the homes installed from it (upgradeRegistry).

export const CODE = /^mcp-warden: ([A-Z_]+):/m;
export const ID = 'demo-server';
export const PINNED = { issuer: GITHUB_ISSUER, repository: identityFor(DEMO_SERVER, '1.0.0').repository, workflow: identityFor(DEMO_SERVER, '1.0.0').workflow };
export const GENUINE_11 = identityFor(DEMO_SERVER, '1.1.0');
export const MOVED_11: Identity = { ...GENUINE_11, repository: 'https://github.com/mcp-warden-test-moved/demo-server' };

const sha512 = (b: Buffer) => crypto.createHash('sha512').update(b).digest();
const sha256 = (b: Buffer | string) => crypto.createHash('sha256').update(b).digest('hex');
/** What install and upgrade name a version by: its tarball's integrity and its store entry. */
const release = (version: string) => {
  const d = sha512(packFixture(DEMO_SERVER, version));
  return { integrity: `sha512-${d.toString('base64')}`, entry: `@mcp-warden-test+demo-server@${version}-${d.toString('hex').slice(0, 12)}` };
};
export const V10 = release('1.0.0');
export const V11 = release('1.1.0');

export const serverEntry = (home: string): ServerJson => member(readHomeJson(home, 'servers.json').servers, ID);
export const allowlisted = (home: string): AllowlistJson['entries'] => readHomeJson(home, 'allowlist.json').entries;
export const storeEntries = (home: string) => fs.readdirSync(path.join(home, 'store')).filter((n) => !n.startsWith('.'));
export const entryDir = (home: string, entry: string) => path.join(home, 'store', entry);
export const pkgDir = (home: string, entry: string) => path.join(entryDir(home, entry), 'node_modules', DEMO_SERVER);
export const inside = (p: string, dir: string) => p === dir || p.startsWith(dir + path.sep);
export const TRUST_FILES = ['servers.json', 'allowlist.json', 'tools.lock', 'warden.lock'];

/** What an upgrade may change only on an accepted switch: the four trust files (by content) and the whole store. */
export function trustState(home: string): { files: Record<string, string>; store: Record<string, string> } {
  return { files: Object.fromEntries(TRUST_FILES.map((f) => [f, sha256(fs.readFileSync(path.join(home, f)))])), store: treeSnapshot(path.join(home, 'store')) };
}

/** The test's directory and registry stand-in, set by upgradeRegistry's beforeAll (live bindings). */
export let dir: string;
export let reg: ProvenanceRegistry;
/** Call at a test file's top level: starts the registry stand-in (demo-server 1.0.0 and demo-dep 1.0.0 published
 *  genuine) in a fresh directory before the file's tests, and removes both after them. */
export function upgradeRegistry(): void {
  beforeAll(async () => {
    dir = tempDir('warden-upgrade-');
    reg = await startProvenanceRegistry(dir);
  });
  afterAll(async () => {
    await reg?.close();
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  });
}

export const upgrade = (home: string, args: string[]): CliResult & { refusal: string | undefined } => {
  const r = cli(home, ['upgrade', ID, ...args], { env: reg.env });
  return { ...r, refusal: CODE.exec(r.stderr)?.[1] };
};

/** A home with demo-server 1.0.0 installed (as `form` publishes it; genuine by default), 1.1.0 not published. */
export function installedHome(name: string, form: PublishOptions = {}, flags: string[] = []): string {
  reg.unpublish(DEMO_SERVER, '1.1.0');
  reg.publish(DEMO_SERVER, '1.0.0', form);
  const home = path.join(dir, name);
  reg.trustHome(home);
  const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, ...flags, '--yes'], { env: reg.env });
  if (r.code !== 0) throw new Error(`the install ${name} starts from failed (${r.code}): ${r.stderr}${r.stdout}`);
  reg.publish(DEMO_SERVER, '1.0.0'); // genuine again for whoever installs next
  return home;
}

/**
 * DIR/home as `installedHome('home')` leaves it (demo-server 1.0.0 installed genuine), for the tests that start
 * from that install: made at the first call, then put back at each (copied with its modes and times from a copy
 * kept beside it), at the same path, so the paths the install wrote into the home are the ones it would write.
 */
export function genuineHome(): string {
  const home = path.join(dir, 'home');
  const kept = path.join(dir, 'home-installed-genuine');
  fs.rmSync(home, { recursive: true, force: true });
  if (fs.existsSync(kept)) fs.cpSync(kept, home, { recursive: true, preserveTimestamps: true });
  else fs.cpSync(installedHome('home'), kept, { recursive: true, preserveTimestamps: true });
  return home;
}
