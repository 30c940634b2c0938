import fs from 'node:fs';
import path from 'node:path';
import { digestPackageTree } from '../../attest/tree.js';
import { WardenError } from '../../error.js';
import type { TrustRoot } from '../../provenance/trust-root.js';
import { writeJsonAtomic } from '../../store/atomic.js';
import { entryDir, entryName, packageDirOf, readInstallRecord, RECORD_FILE, removeEntry, seal, writableIn, type InstallRecord } from '../../store/package-store.js';
import type { HomePaths } from '../../store/paths.js';
import type { Candidate } from './candidate.js';
import { checkDeclaredDependencies, dependencyProvenance, readLock } from './dependencies.js';

// Puts a verified candidate into the sealed store: npm resolves exactly that version with its dependencies into
// a lockfile, which must pin the package to the integrity that was verified, install only the dependencies its
// tarball declares and take every package from a registry tarball; then `npm ci` installs that lockfile (install
// scripts not run) into a fresh directory, the dependencies' provenance is looked up, the entry gets its final name,
// its tree digest, its install record, and loses every write bit. Called under the store lock.

export interface StoreEntry {
  name: string;
  dir: string;
  pkgDir: string;
  record: InstallRecord;
  /** False when an intact earlier install of the same bytes was reused. */
  created: boolean;
}

const NPM_FLAGS = ['--ignore-scripts', '--omit=dev', '--no-audit', '--no-fund', '--install-links=false', '--loglevel=error'];

/** Runs npm in `dir` with the flags every store install uses; a failure is INSTALL_FAILED with npm's last lines. */
export async function runNpm(dir: string, c: Candidate, args: string[]): Promise<void> {
  const { execa } = await import('execa');
  const r = await execa('npm', [...args, ...NPM_FLAGS], { cwd: dir, reject: false, timeout: 600_000, stdin: 'ignore' });
  if (r.exitCode !== 0 || r.timedOut) {
    const tail = `${r.stderr}`.trim().split('\n').slice(-3).join(' ');
    throw new WardenError('INSTALL_FAILED', `npm ${args[0]} of ${c.name}@${c.version} failed${r.timedOut ? ' (timed out after 10 minutes)' : ''}: ${tail || `exit ${r.exitCode}`}. Nothing was installed.`);
  }
}

/** The lockfile npm resolved, refused unless it pins the verified package, installs only the dependencies its
 *  tarball declares, and takes every package from a registry tarball with an integrity. */
export function vetLock(dir: string, c: Candidate): ReturnType<typeof readLock> {
  const lock = readLock(dir, c.name);
  if (lock.top.version !== c.version || lock.top.integrity !== c.integrity) {
    throw new WardenError('INTEGRITY_MISMATCH', `npm installed ${c.name}@${String(lock.top.version)} with integrity ${String(lock.top.integrity).slice(0, 23)}…, not the ${c.version} (${c.integrity.slice(0, 23)}…) that was verified: the registry answered npm differently. Nothing was installed.`);
  }
  checkDeclaredDependencies(lock.top, c.manifest, `${c.name}@${c.version}`);
  return lock;
}

/**
 * npm installs exactly that version (install scripts not run) with its dependencies into `dir`, in two steps: it
 * first only resolves the tree into a lockfile (no tarball fetched, no git dependency prepared), which is vetted;
 * then `npm ci` installs what that lockfile pins. A single `npm install` would fetch and prepare a git dependency
 * before the lockfile could be read, and preparing one runs `npm install` in its clone, reading the clone's .npmrc.
 * Given a lockfile (a trust bundle's), the first step is writing it: the same vetting, the same `npm ci`.
 */
async function npmInstall(dir: string, c: Candidate, lockfile: object | undefined): Promise<ReturnType<typeof readLock>> {
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'mcp-warden-store-entry', private: true, dependencies: { [c.name]: c.version } }, null, 2) + '\n');
  if (lockfile) fs.writeFileSync(path.join(dir, 'package-lock.json'), JSON.stringify(lockfile, null, 2) + '\n');
  else await runNpm(dir, c, ['install', '--package-lock-only', '--save-exact', '--package-lock=true']);
  vetLock(dir, c);
  await runNpm(dir, c, ['ci']);
  return vetLock(dir, c);
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
