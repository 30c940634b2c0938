import fs from 'node:fs';
import path from 'node:path';
import { CACHE_FILE } from './digest-cache-file.js';
import { LOCK_CACHE_FILE } from './lock-entry-cache.js';
import { checkHomeChain, checkTrusted } from './perms.js';
import type { HomePaths } from './paths.js';

/**
 * The state the warden acts on besides the trust files, each refused (FILE_INSECURE, naming the chmod or chown
 * that fixes it) when another user owns it or could write it: a cache entry vouches for a digest, an audit line
 * for what happened, a backup is what a client file is restored from, packages/ and store/ hold code that will run.
 * run/ is checked where its records are read (launch/). Missing paths are not checked.
 */
export function checkStateFiles(paths: HomePaths): void {
  checkTrusted(paths.cacheDir, 'the digest cache directory', 'file');
  for (const file of cacheFiles(paths)) checkTrusted(file, 'a cache file', 'file');
  checkTrusted(paths.audit, 'the audit log', 'file');
  checkTrusted(`${paths.audit}.lock`, 'the audit log lock', 'file');
  checkTrusted(paths.imports, 'imports.json', 'file');
  checkTrusted(paths.backupsDir, 'the backups directory', 'file');
  checkTrusted(paths.packagesDir, 'the packages directory', 'file');
  checkTrusted(paths.storeDir, 'the package store', 'file');
}

/** Creates the home and its subdirectories (owner-only) if missing, then checks that no one else can write it. */
export function openHome(paths: HomePaths, create: boolean): void {
  if (create) {
    fs.mkdirSync(paths.home, { recursive: true, mode: 0o700 });
    fs.mkdirSync(paths.cacheDir, { recursive: true, mode: 0o700 });
    fs.mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
  }
  checkHomeChain(paths.home);
  checkStateFiles(paths);
}

/** Every cache file that vouches for something (cache/digests*.json, cache/locks.ID.json). */
function cacheFiles(paths: HomePaths): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(paths.cacheDir);
  } catch {
    return [];
  }
  return names.filter((n) => n === 'digests.json' || CACHE_FILE.test(n) || LOCK_CACHE_FILE.test(n)).map((n) => path.join(paths.cacheDir, n));
}
