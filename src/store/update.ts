import lockfile from 'proper-lockfile';
import { WardenError } from '../error.js';
import { ownerOnlyLockFs } from '../owner-lock.js';
import { writeAtomic } from './atomic.js';

// Every update of a trust file (servers.json, allowlist.json, tools.lock, warden.lock, imports.json) is a
// read-modify-write under that file's lock (`FILE.lock`, a directory, as proper-lockfile makes it): the file is
// read inside the lock, the change applied to what was read, and the result saved atomically before the lock
// is released. Two writers in other processes (five `add`s at once) therefore never lose each other's update.
// Several files are locked in one fixed order (sorted paths), so two updates cannot deadlock.

const LOCK_OPTIONS = {
  realpath: false, // the file may not exist yet
  fs: ownerOnlyLockFs,
  retries: { retries: 300, factor: 1.2, minTimeout: 5, maxTimeout: 100 },
  // A writer killed while holding the lock leaves it behind: 2 s (proper-lockfile's minimum; the holder
  // refreshes it every second) before others may take it over.
  stale: 2_000,
};

/** Runs `fn` holding the locks of `files`; fails closed if a lock is lost (compromised) before `fn` saves. */
export async function withFileLocks<R>(files: readonly string[], label: string, fn: (stillHeld: () => void) => R | Promise<R>): Promise<R> {
  const ordered = [...new Set(files)].sort();
  const releases: (() => Promise<void>)[] = [];
  let lost: Error | undefined;
  const stillHeld = (): void => {
    if (lost) throw new WardenError('FILE_LOCKED', `the lock on ${label} was taken over by another process while this one held it (${lost.message}); nothing more was written. Run the command again.`);
  };
  try {
    for (const file of ordered) {
      try {
        releases.push(await lockfile.lock(file, { ...LOCK_OPTIONS, onCompromised: (err: Error) => (lost = err) }));
      } catch (err) {
        throw new WardenError('FILE_LOCKED', `could not lock ${file} to update it (${(err as Error).message}); another mcp-warden is writing it. If none is running, remove ${file}.lock and run the command again.`);
      }
    }
    return await fn(stillHeld);
  } finally {
    for (const release of releases.reverse()) await release().catch(() => undefined);
  }
}

/**
 * Updates one file under its lock: `load` reads it (inside the lock), `apply` changes the value in place (and
 * returns what the caller wants to know), `render` serializes it; the file is written atomically only if the
 * rendering changed.
 */
export async function updateFile<T, R>(file: string, label: string, load: () => T, render: (value: T) => string, apply: (value: T) => R | Promise<R>): Promise<R> {
  return withFileLocks([file], label, async (stillHeld) => {
    const value = load();
    const before = render(value);
    const result = await apply(value);
    const after = render(value);
    if (after !== before) {
      stillHeld();
      writeAtomic(file, after);
    }
    return result;
  });
}
