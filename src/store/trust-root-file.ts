import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WardenError, errnoOf } from '../error.js';
import { SHIPPED_TRUST_ROOT } from '../provenance/shipped-root.js';
import { openTrustRoot, trustRootDataSchema, type TrustRoot, type TrustRootData } from '../provenance/trust-root.js';
import { writeJsonAtomic } from './atomic.js';
import { loadJsonFile } from './json-file.js';
import type { HomePaths } from './paths.js';
import { checkTrusted } from './perms.js';
import { withFileLocks } from './update.js';

// The sigstore trust root in use: <home>/trust-root.json once `trust-root update` wrote one (a trust file like
// servers.json: owner-only, refused when another user could write it), else the one shipped with mcp-warden.

export const SHIPPED_ORIGIN = 'shipped with mcp-warden';

/** The home's trust root if there is one, else the shipped one. */
export function loadTrustRoot(paths: HomePaths): TrustRoot {
  const stored = loadJsonFile(paths.trustRoot, 'trust-root.json', trustRootDataSchema, true);
  return stored ? openTrustRoot(stored, paths.trustRoot) : openTrustRoot(SHIPPED_TRUST_ROOT, SHIPPED_ORIGIN);
}

/** Stores a trust root in the home (it is checked before anything is written). */
export function saveTrustRoot(paths: HomePaths, data: TrustRootData): TrustRoot {
  const root = openTrustRoot(data, paths.trustRoot);
  fs.mkdirSync(paths.home, { recursive: true, mode: 0o700 });
  writeJsonAtomic(paths.trustRoot, data);
  return root;
}

/** The trust root in use, for an update: a home's trust-root.json that is not valid (not JSON, its schema, its
 *  keys) does not stop an update that replaces it whole; one another user could write still does. */
export type CurrentTrustRoot = { root: TrustRoot; invalid?: undefined } | { root?: undefined; invalid: WardenError };

export function currentTrustRoot(paths: HomePaths): CurrentTrustRoot {
  try {
    return { root: loadTrustRoot(paths) };
  } catch (err) {
    if (err instanceof WardenError && (err.code === 'FILE_INVALID' || err.code === 'FILE_NOT_JSON' || err.code === 'TRUST_ROOT_INVALID')) return { invalid: err };
    throw err;
  }
}

export interface TrustRootChange {
  previous: CurrentTrustRoot;
  root: TrustRoot;
  /** sha256 of trust-root.json as written. */
  sha256: string;
}

/**
 * Replaces the home's trust root under the lock of trust-root.json: the root in use is read inside the lock,
 * `next` makes the new one from it (and may refuse: then nothing is written), which is checked and saved
 * atomically. Creates the home (owner-only) if needed.
 */
export function updateTrustRoot(paths: HomePaths, next: (current: CurrentTrustRoot) => TrustRootData): Promise<TrustRootChange> {
  fs.mkdirSync(paths.home, { recursive: true, mode: 0o700 });
  return withFileLocks([paths.trustRoot], 'trust-root.json', (stillHeld) => {
    const previous = currentTrustRoot(paths);
    const data = next(previous);
    stillHeld();
    const root = saveTrustRoot(paths, data);
    const sha256 = createHash('sha256').update(fs.readFileSync(paths.trustRoot)).digest('hex');
    return { previous, root, sha256 };
  });
}

/** Where `trust-root update` keeps sigstore's TUF metadata between runs (the newest TUF root reached). */
export function tufCacheDir(paths: HomePaths): string {
  return path.join(paths.cacheDir, 'tuf');
}

/** Refuses a TUF cache another user could write (it holds the TUF root the next update starts from). */
function checkTufCache(dir: string): void {
  checkTrusted(dir, 'the TUF cache', 'file');
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const p = path.join(dir, name);
    checkTrusted(p, 'the TUF cache', 'file');
    if (fs.lstatSync(p).isDirectory()) checkTufCache(p);
  }
}

/**
 * Runs `fn` with the TUF cache directory (created owner-only, with the home and cache/ if missing). If `fn`
 * fails, the directories this call created are removed again, so a failed update leaves the home as it was.
 */
export async function withTufCache<R>(paths: HomePaths, fn: (dir: string) => Promise<R>): Promise<R> {
  const dir = tufCacheDir(paths);
  checkTrusted(paths.cacheDir, 'the digest cache directory', 'file');
  checkTufCache(dir);
  const created: string[] = [];
  // The home and any missing directory above it (~/.config on a fresh account), outermost first.
  const first = fs.mkdirSync(paths.home, { recursive: true, mode: 0o700 });
  for (let d = paths.home; first !== undefined; d = path.dirname(d)) {
    created.unshift(d);
    if (d === first || d === path.dirname(d)) break;
  }
  for (const d of [paths.cacheDir, dir]) {
    try {
      fs.mkdirSync(d, { mode: 0o700 });
      created.push(d);
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST') throw err;
    }
  }
  try {
    // Two updates at once would write the same TUF metadata files: one at a time (the lock is cache/tuf.lock).
    return await withFileLocks([dir], 'the TUF cache', () => fn(dir));
  } catch (err) {
    for (const d of created.reverse()) {
      try {
        if (d === dir) fs.rmSync(d, { recursive: true, force: true });
        else fs.rmdirSync(d); // only if still empty: another command may have written there meanwhile
      } catch {
        // left as it is
      }
    }
    throw err;
  }
}
