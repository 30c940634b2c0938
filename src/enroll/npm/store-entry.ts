import fs from 'node:fs';
import path from 'node:path';
import { digestPackageTree } from '../../attest/tree.js';
import { WardenError } from '../../error.js';
import { escaped } from '../../escape.js';
import type { TrustRoot } from '../../provenance/trust-root.js';
import { writeJsonAtomic } from '../../store/atomic.js';
import { entryDir, entryName, packageDirOf, readInstallRecord, RECORD_FILE, removeEntry, seal, writableIn, type InstallRecord } from '../../store/package-store.js';
import type { HomePaths } from '../../store/paths.js';
import type { Candidate } from './candidate.js';
import { lockfileProblem, registryTarball } from '../../store/package-lockfile.js';
import { checkDeclaredDependencies, dependencyProvenance, readLock, readLockFile } from './dependencies.js';
import { runNpm } from './npm-cli.js';

// Puts a verified candidate into the sealed store: npm resolves exactly that version with its dependencies into
// a lockfile, which must pin the package to the integrity that was verified, install only the dependencies its
// tarball declares and take every package from its registry tarball (docs/adr/0043); then `npm ci` installs that
// lockfile (no install script, no git or other source: npm-cli.ts) into a fresh directory, the dependencies' provenance is looked up, the entry gets its final name,
// its tree digest, its install record, and loses every write bit. Called under the store lock.

export interface StoreEntry {
  name: string;
  dir: string;
  pkgDir: string;
  record: InstallRecord;
  /** False when an intact earlier install of the same bytes was reused. */
  created: boolean;
}

/** The lockfile npm resolved (or a bundle's, with the registry's tarball URLs written in), refused unless it pins
 *  the verified package, installs only the dependencies its tarball declares, and passes the store's lockfile rules
 *  (package-lockfile.ts): every package a registry tarball of this registry pinned by integrity, every edge a
 *  semver range satisfied inside the lockfile. */
export function vetLock(dir: string, c: Candidate): ReturnType<typeof readLock> {
  const raw = readLockFile(dir);
  const lock = readLock(raw, c.name);
  if (lock.top.version !== c.version || lock.top.integrity !== c.integrity) {
    throw new WardenError('INTEGRITY_MISMATCH', `npm installed ${c.name}@${escaped(String(lock.top.version))} with integrity ${escaped(String(lock.top.integrity).slice(0, 23))}…, not the ${c.version} (${c.integrity.slice(0, 23)}…) that was verified: the registry answered npm differently. Nothing was installed.`);
  }
  checkDeclaredDependencies(lock.top, c.manifest, `${c.name}@${c.version}`);
  const problem = lockfileProblem(raw, { name: c.name, version: c.version, integrity: c.integrity, registry: c.registry, aliases: true });
  if (problem !== undefined) {
    throw new WardenError('NPM_SOURCE_REFUSED', `the lockfile for ${c.name}@${c.version} would make npm take what was not verified (package-lock.json${escaped(problem)}); nothing was installed. npm takes packages only from ${c.registry}, as exact versions pinned by integrity.`);
  }
  return lock;
}

/** Refuses an install whose record of what npm put in node_modules (node_modules/.package-lock.json) is not, package
 *  for package, the lockfile that was vetted: same places, versions, tarball URLs and integrities. A vetted package
 *  the lockfile marks optional may be missing: npm ci skips one whose os or cpu is not this machine's, and what only
 *  it needs (sharp's wasm32 build and @emnapi/runtime); nothing unvetted is on disk for it. */
function checkInstalled(dir: string, c: Candidate): void {
  const vetted = (readLockFile(dir) as { packages: Record<string, Record<string, unknown>> }).packages;
  const installed = (readLockFile(dir, 'node_modules/.package-lock.json') as { packages?: unknown }).packages;
  const same = (a: Record<string, unknown> | undefined, b: Record<string, unknown>): boolean => a !== undefined && ['name', 'version', 'resolved', 'integrity', 'inBundle', 'link'].every((f) => a[f] === b[f]);
  const keys = Object.keys(vetted).filter((k) => k !== '');
  const inst = installed !== null && typeof installed === 'object' ? (installed as Record<string, Record<string, unknown>>) : {};
  const other = Object.keys(inst).find((k) => k !== '' && !Object.hasOwn(vetted, k)) ?? keys.find((k) => (Object.hasOwn(inst, k) || vetted[k]?.optional !== true) && !same(Object.hasOwn(inst, k) ? inst[k] : undefined, vetted[k] as Record<string, unknown>));
  if (other !== undefined) {
    throw new WardenError('NPM_SOURCE_REFUSED', `npm ci of ${c.name}@${c.version} installed ${escaped(other)} otherwise than the vetted lockfile pins it (node_modules/.package-lock.json); nothing was installed.`);
  }
}

/**
 * npm installs exactly that version (install scripts not run) with its dependencies into `dir`, in two steps: it
 * first only resolves the tree into a lockfile (no tarball fetched; no git, URL, file or directory dependency
 * fetched or prepared: npm-cli.ts), which is vetted; then `npm ci` installs what that lockfile pins, each package
 * from its registry tarball URL, and what it installed is compared with it. Given a lockfile (a trust bundle's,
 * which carries no URLs), the first step is writing it with each package's tarball URL on this machine's registry:
 * the same vetting, the same `npm ci`, and npm reads no package document to install it.
 */
async function npmInstall(dir: string, c: Candidate, lockfile: object | undefined): Promise<ReturnType<typeof readLock>> {
  const label = `${c.name}@${c.version}`;
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'mcp-warden-store-entry', private: true, dependencies: { [c.name]: c.version } }, null, 2) + '\n');
  if (lockfile) fs.writeFileSync(path.join(dir, 'package-lock.json'), JSON.stringify(withTarballUrls(lockfile, c.registry), null, 2) + '\n');
  else await runNpm(dir, label, ['install', '--package-lock-only', '--save-exact', '--package-lock=true']);
  vetLock(dir, c);
  await runNpm(dir, label, ['ci']);
  checkInstalled(dir, c);
  return vetLock(dir, c);
}

/** A bundle's lockfile with each package (bundled ones excepted) given its tarball URL on `registry`; what is not
 *  a package entry is left as it is, for the vetting to refuse. */
function withTarballUrls(lockfile: object, registry: string): object {
  const packages = (lockfile as { packages?: unknown }).packages;
  if (packages === null || typeof packages !== 'object' || Array.isArray(packages)) return lockfile;
  const out: Record<string, unknown> = {};
  for (const [key, e] of Object.entries(packages as Record<string, unknown>)) {
    const entry = e as Record<string, unknown> | null;
    const named = typeof entry?.name === 'string' ? entry.name : key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const url = key !== '' && entry !== null && typeof entry === 'object' && entry.inBundle !== true && !('resolved' in entry) && typeof entry.version === 'string' ? registryTarball(registry, named, entry.version) : undefined;
    Object.defineProperty(out, key, { value: url === undefined ? e : { ...entry, resolved: url }, enumerable: true });
  }
  return { ...lockfile, packages: out };
}

/** An earlier install of the same bytes, if it is complete and unchanged; a half-made one is removed. */
function reusable(dir: string, c: Candidate): InstallRecord | undefined {
  if (!fs.existsSync(dir)) return undefined;
  const record = readInstallRecord(dir);
  if (!record) {
    removeEntry(dir); // an install that stopped before its record was written
    return undefined;
  }
  const writable = writableIn(dir);
  const tree = record.package.integrity === c.integrity ? digestPackageTree(record.tree.root) : undefined;
  if (writable || !tree || tree.sha256 !== record.tree.sha256) {
    throw new WardenError(
      'STORE_ENTRY_CHANGED',
      `the store entry ${dir} is no longer what was installed there (${writable ? `${writable} is writable` : 'its files changed'}). Find out what changed it; then remove it (chmod -R u+w ${dir} && rm -r ${dir}) and install again.`,
    );
  }
  // An entry made by an earlier warden (before docs/adr/0043) may hold what npm took from elsewhere: it is reused
  // only if its lockfile, and npm's record of what it installed, pass the rules a new install must pass.
  try {
    vetLock(dir, { ...c, registry: record.registry });
    checkInstalled(dir, c);
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    throw new WardenError('NPM_SOURCE_REFUSED', `the store entry ${dir}, made earlier, cannot be reused: ${err.message} Remove it (chmod -R u+w ${dir} && rm -r ${dir}) and install again.`);
  }
  return record;
}

/**
 * The entry of a verified candidate: an intact earlier one of the same bytes, else a new one. `lockfile` (a trust
 * bundle's, docs/adr/0029) is installed instead of the one npm would resolve here, with the same vetting.
 */
export async function putInStore(paths: HomePaths, c: Candidate, root: TrustRoot, admittedBy: string | undefined, lockfile?: object): Promise<StoreEntry> {
  const name = entryName(c.name, c.version, c.integrity);
  const dir = entryDir(paths, name);
  const pkgDir = packageDirOf(dir, c.name);
  const earlier = reusable(dir, c);
  if (earlier) return { name, dir, pkgDir, record: earlier, created: false };

  fs.mkdirSync(paths.storeDir, { recursive: true, mode: 0o700 });
  const tmp = fs.mkdtempSync(path.join(paths.storeDir, '.tmp-'));
  let dependencies: InstallRecord['dependencies'];
  try {
    const { deps } = await npmInstall(tmp, c, lockfile);
    dependencies = await dependencyProvenance(deps, root);
    fs.renameSync(tmp, dir);
  } catch (err) {
    removeEntry(tmp);
    throw err;
  }
  try {
    const tree = digestPackageTree(pkgDir);
    const record: InstallRecord = {
      version: 1,
      package: { name: c.name, version: c.version, integrity: c.integrity },
      provenance: c.provenance ? { identity: c.provenance.identity, ...(c.provenance.signedAt ? { signedAt: c.provenance.signedAt } : {}), predicateType: c.provenance.predicateType } : { unsigned: true, admittedBy: admittedBy ?? 'unknown' },
      verifiedAt: new Date().toISOString(),
      registry: c.registry,
      tree: { root: tree.root, sha256: tree.sha256 },
      dependencies,
    };
    writeJsonAtomic(path.join(dir, RECORD_FILE), record);
    seal(dir);
    return { name, dir, pkgDir: tree.root, record, created: true };
  } catch (err) {
    removeEntry(dir);
    throw err;
  }
}
