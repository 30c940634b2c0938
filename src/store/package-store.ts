import fs from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import * as v from 'valibot';
import { WardenError, errnoOf } from '../error.js';
import { loadJsonFile } from './json-file.js';
import type { HomePaths } from './paths.js';
import { checkTrusted } from './perms.js';
import { withFileLocks } from './update.js';

// The sealed package store: <home>/store/<name>@<version>-<integrity prefix>/, one directory per verified
// package version, content-addressed by the tarball's sha512. Inside: the npm project that installed it
// (package.json naming the one dependency, package-lock.json with every integrity, node_modules/) and
// install.json, what was verified. Once installed nothing in it is writable (directories 0555, files 0444 or
// 0555): a server runs from its entry, never from a directory a build or an editor writes to. The same user
// can still chmod it back; the store keeps honest tools out, the daemon's watch and the tree digest catch the
// rest. `store gc` removes entries no server names.

const identitySchema = v.object({
  issuer: v.string(),
  repository: v.string(),
  workflow: v.string(),
  san: v.optional(v.string()),
  ref: v.optional(v.string()),
  commit: v.optional(v.string()),
  run: v.optional(v.string()),
});

const integrity = v.pipe(v.string(), v.regex(/^sha512-[A-Za-z0-9+/]{86}==$/, 'expected a sha512 integrity (sha512-<base64>)'));

export const installRecordSchema = v.object({
  version: v.literal(1),
  package: v.object({ name: v.string(), version: v.string(), integrity }),
  /** Who built it (verified), or the unsigned admission. */
  provenance: v.union([
    v.object({ identity: identitySchema, signedAt: v.optional(v.string()), predicateType: v.string() }),
    v.object({ unsigned: v.literal(true), admittedBy: v.string() }),
  ]),
  verifiedAt: v.pipe(v.string(), v.isoTimestamp('expected an ISO 8601 timestamp')),
  registry: v.string(),
  /** The package directory the server runs from, and its tree digest when installed. */
  tree: v.object({ root: v.string(), sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)) }),
  dependencies: v.array(
    v.object({ name: v.string(), version: v.string(), integrity: v.string(), provenance: v.optional(identitySchema) }),
  ),
});
export type InstallRecord = v.InferOutput<typeof installRecordSchema>;

export const RECORD_FILE = 'install.json';

/** The entry's directory name: `@scope+name@1.2.3-<12 hex of the sha512>`. */
export function entryName(name: string, version: string, sri: string): string {
  const hex = Buffer.from(sri.replace(/^sha512-/, ''), 'base64').toString('hex').slice(0, 12);
  return `${name.replace('/', '+')}@${version}-${hex}`;
}

export function entryDir(paths: HomePaths, name: string): string {
  return path.join(paths.storeDir, name);
}

/** The package directory inside an entry (where its bin script lives). */
export function packageDirOf(dir: string, pkgName: string): string {
  return path.join(dir, 'node_modules', pkgName);
}

/** The install record of an entry; undefined when the entry does not exist or was never completed. */
export function readInstallRecord(dir: string): InstallRecord | undefined {
  checkTrusted(dir, 'a store entry', 'file');
  return loadJsonFile(path.join(dir, RECORD_FILE), `the install record of ${path.basename(dir)}`, installRecordSchema, true);
}

/** The completed entries of the store (names), sorted; half-made ones (".tmp-…") are not listed. */
export function listEntries(paths: HomePaths): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(paths.storeDir);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return [];
    throw err;
  }
  return names.filter((n) => !n.startsWith('.')).sort();
}

/** The file the store's lock is taken on: proper-lockfile makes the directory <store>/.lock.lock beside it,
 *  dot-named like every name in the store that is not an entry (listEntries and `store gc` skip them). */
export const STORE_LOCK = '.lock';

/**
 * Runs `fn` holding the store's lock, creating <home>/store (owner-only) if missing. `install` and `upgrade` hold
 * it from creating an entry until servers.json names it (`updateServers` inside `fn`), `store gc` while it
 * decides what no server names and removes it: gc never removes an entry between its creation and the server
 * entry that names it. Take it before servers.json's lock, never inside it. `stillHeld()` throws FILE_LOCKED if
 * the lock was taken over (a holder that stalled over 2 s): call it before each change. `onWait` is called
 * once, before waiting, when another process holds the lock (to tell the user why nothing happens).
 */
export function withStoreLock<R>(paths: HomePaths, fn: (stillHeld: () => void) => R | Promise<R>, onWait?: () => void): Promise<R> {
  fs.mkdirSync(paths.storeDir, { recursive: true, mode: 0o700 });
  const file = path.join(paths.storeDir, STORE_LOCK);
  if (onWait && lockfile.checkSync(file, { realpath: false, stale: 2_000 })) onWait();
  return withFileLocks([file], `the package store ${paths.storeDir}`, fn);
}

/** Makes a directory tree read-only (no write bit anywhere), deepest first. Symlinks are left as they are. */
export function seal(dir: string): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) seal(p);
    else if (entry.isFile()) fs.chmodSync(p, fs.statSync(p).mode & 0o100 ? 0o555 : 0o444);
  }
  fs.chmodSync(dir, 0o555);
}

/** Removes a store entry (sealed or half-made): write bits back on its directories first, then delete. */
export function removeEntry(dir: string): void {
  const open = (d: string): void => {
    fs.chmodSync(d, 0o700);
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) if (entry.isDirectory()) open(path.join(d, entry.name));
  };
  try {
    open(dir);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return;
    throw new WardenError('INSTALL_FAILED', `could not open ${dir} for removal (${errnoOf(err) ?? String(err)}); remove it by hand (chmod -R u+w, then rm -r).`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Whether a directory tree has a write bit anywhere (a sealed entry has none). */
export function writableIn(dir: string): string | undefined {
  const st = fs.lstatSync(dir);
  if (st.mode & 0o222 && !st.isSymbolicLink()) return dir;
  if (!st.isDirectory()) return undefined;
  for (const name of fs.readdirSync(dir)) {
    const found = writableIn(path.join(dir, name));
    if (found) return found;
  }
  return undefined;
}
