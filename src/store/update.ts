import path from 'node:path';
import { properLockfile } from '../proper-lockfile.js';
import { WardenError } from '../error.js';
import { appendAudit } from '../audit/log.js';
import { ownerOnlyLockFs } from '../owner-lock.js';
import { writeAtomic } from './atomic.js';
import { commitDir, commitUnderJournalLock, completeJournal, journalFiles, journalPath, readJournal, type FileWrite } from './journal.js';

// Every update of a trust file (servers.json, allowlist.json, tools.lock, warden.lock, imports.json) is a
// read-modify-write under that file's lock (`FILE.lock`, a directory, as proper-lockfile makes it): the file is
// read inside the lock, the change applied to what was read, and the result saved atomically before the lock
// is released. Two writers in other processes (five `add`s at once) therefore never lose each other's update.
// Several files are locked in one fixed order (sorted paths), so two updates cannot deadlock. A change of several
// files is one step (commitFiles, store/journal.ts): once a writer holds its locks, an interrupted change naming
// any of its files is completed before it reads them (or, if that change names files it does not hold, refused).

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
        releases.push(await (await properLockfile()).lock(file, { ...LOCK_OPTIONS, onCompromised: (err: Error) => (lost = err) }));
      } catch (err) {
        throw new WardenError('FILE_LOCKED', `could not lock ${file} to update it (${(err as Error).message}); another mcp-warden is writing it. If none is running, remove ${file}.lock and run the command again.`);
      }
    }
    await completePending(ordered);
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

/** Completes, under the locks of `held`, an interrupted change of the trust files among them (store/journal.ts),
 *  and records that it was completed late. A change that also names a file not held is refused: it would be read
 *  half done. */
async function completePending(held: readonly string[]): Promise<void> {
  for (const dir of new Set(held.map((f) => path.dirname(f)))) {
    const journal = readJournal(dir);
    if (!journal) continue;
    const named = journalFiles(dir, journal);
    if (!named.some((f) => held.includes(f))) continue;
    if (!named.every((f) => held.includes(f))) {
      throw new WardenError('FILE_LOCKED', `an interrupted change (${journal.what}) of ${named.join(', ')} is recorded in ${journalPath(dir)}; nothing was read or written. Run the command again: it completes that change first.`);
    }
    completeJournal(dir, journal);
    await appendAudit(path.join(dir, 'audit.log'), { event: 'trust_commit_completed', what: journal.what, files: journal.files.map((f) => f.name) });
  }
}

/** Before a command reads the trust files of `home`: completes a change of several of them that was interrupted
 *  (a crash, a full disk), taking its files' locks. One lstat when there is none. */
export async function settlePendingCommit(home: string): Promise<void> {
  const journal = readJournal(home);
  if (journal) await withFileLocks(journalFiles(home, journal), 'the trust files of an interrupted change', () => undefined);
}

/**
 * Writes several trust files of one home as one step (store/journal.ts); the caller holds every file's lock (it
 * runs inside withFileLocks). A single file is written atomically as it is.
 */
export async function commitFiles(writes: readonly FileWrite[], what: string): Promise<void> {
  if (writes.length === 0) return;
  const dir = commitDir(writes);
  if (writes.length === 1) {
    writeAtomic(writes[0]!.file, writes[0]!.data);
    return;
  }
  await withFileLocks([journalPath(dir)], 'the commit journal', () => commitUnderJournalLock(writes, what));
}
