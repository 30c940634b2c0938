import fs from 'node:fs';
import { WardenError, errnoOf } from '../error.js';
import { LockfileError, parseToolsLock, renderToolsLock, type LockEntry, type ToolsLock } from '../surface/lockfile.js';
import { parseWardenLock, renderWardenLock, type WardenLock, type WardenLockEntry } from '../surface/warden-lock.js';
import type { HomePaths } from './paths.js';
import type { Baseline } from '../canary/baseline.js';
import { checkTrusted } from './perms.js';
import { commitFiles, withFileLocks } from './update.js';

// tools.lock and warden.lock in the home: trust files (refused if others can write them), parsed strictly;
// a missing file is an empty lock, a corrupt one is a lockfile error (exit 4), never "start afresh".

/** A lock file's bytes, or undefined for a missing file. */
export function readLockBytes(file: string, label: string): { bytes: Buffer | undefined } {
  checkTrusted(file, label, 'file');
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return { bytes: undefined };
    throw new WardenError('LOCK_INVALID', `${label} at ${file} cannot be read (${errnoOf(err) ?? String(err)}).`);
  }
  try {
    return { bytes: fs.readFileSync(fd) };
  } finally {
    fs.closeSync(fd);
  }
}

/** `parse()`, with a LockfileError refused as LOCK_INVALID naming `file`. */
export function parseLock<T>(file: string, label: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof LockfileError) {
      throw new WardenError('LOCK_INVALID', `${label} at ${file} is not a valid lockfile: ${err.reason}. Restore it from version control, or re-create the entry with 'mcp-warden diff <id>' then 'mcp-warden pin <id>'.`);
    }
    throw err;
  }
}

function readOrEmpty<T>(file: string, label: string, parse: (b: Buffer) => Map<string, T>): Map<string, T> {
  const { bytes } = readLockBytes(file, label);
  return bytes ? parseLock(file, label, () => parse(bytes)) : new Map();
}

export interface Locks {
  tools: ToolsLock;
  warden: WardenLock;
}

export function loadLocks(paths: HomePaths): Locks {
  return {
    tools: readOrEmpty(paths.toolsLock, 'tools.lock', parseToolsLock),
    warden: readOrEmpty(paths.wardenLock, 'warden.lock', parseWardenLock),
  };
}

/**
 * Changes tools.lock and warden.lock together under both files' locks: both are read inside the locks, `apply`
 * changes them in place, and the files whose rendering changed are written as one step (store/journal.ts). The
 * only way the locks are written.
 */
export function updateLocks<R>(paths: HomePaths, apply: (locks: Locks) => R | Promise<R>): Promise<R> {
  return withFileLocks([paths.toolsLock, paths.wardenLock], 'tools.lock and warden.lock', async (stillHeld) => {
    const locks = loadLocks(paths);
    const before = { tools: renderToolsLock(locks.tools), warden: renderWardenLock(locks.warden) };
    const result = await apply(locks);
    const after = { tools: renderToolsLock(locks.tools), warden: renderWardenLock(locks.warden) };
    stillHeld();
    await commitFiles(
      [...(after.tools !== before.tools ? [{ file: paths.toolsLock, data: after.tools }] : []), ...(after.warden !== before.warden ? [{ file: paths.wardenLock, data: after.warden }] : [])],
      'the update of tools.lock and warden.lock',
    );
    return result;
  });
}

/** Replaces one server's canary baselines in warden.lock (the server must be locked already). */
export function saveCanaryBaselines(paths: HomePaths, id: string, canaries: Record<string, Baseline>): Promise<void> {
  return updateLocks(paths, (locks) => {
    const extra = locks.warden.get(id);
    if (!extra) throw new WardenError('LOCK_MISSING', `warden.lock has no entry for server '${id}'. Capture one with: mcp-warden lock ${id}`);
    locks.warden.set(id, { ...extra, canaries });
  });
}

/** Writes one server's entries into both locks (in sorted order); the server's canary baselines and pinned
 *  rules and sandbox hashes are kept unless `extra` brings new ones. `entryOf` may compute the entries from the locks as read under the lock. */
export function saveLockEntry(paths: HomePaths, id: string, entryOf: (locks: Locks) => { entry: LockEntry; extra: WardenLockEntry }): Promise<void> {
  return updateLocks(paths, (locks) => {
    const { entry, extra } = entryOf(locks);
    const canaries = extra.canaries ?? locks.warden.get(id)?.canaries;
    const rules = extra.rules ?? locks.warden.get(id)?.rules;
    const sandbox = extra.sandbox ?? locks.warden.get(id)?.sandbox;
    locks.tools.set(id, entry);
    locks.warden.set(id, { ...extra, ...(canaries ? { canaries } : {}), ...(rules ? { rules } : {}), ...(sandbox ? { sandbox } : {}) });
  });
}

/** Pins the hash of a server's rules in warden.lock (undefined: the server has none). The server must be locked. */
export function saveRulesHash(paths: HomePaths, id: string, hash: string | undefined): Promise<string | undefined> {
  return updateLocks(paths, (locks) => {
    const extra = locks.warden.get(id);
    if (!extra) throw new WardenError('LOCK_MISSING', `warden.lock has no entry for server '${id}', so its rules cannot be pinned yet. Capture one with: mcp-warden lock ${id}`);
    const { rules: before, ...rest } = extra;
    locks.warden.set(id, { ...rest, ...(hash ? { rules: hash } : {}) });
    return before;
  });
}

/** Pins the hash of a server's sandbox in warden.lock (undefined: it has none). The server must be locked. */
export function saveSandboxHash(paths: HomePaths, id: string, hash: string | undefined): Promise<string | undefined> {
  return updateLocks(paths, (locks) => {
    const extra = locks.warden.get(id);
    if (!extra) throw new WardenError('LOCK_MISSING', `warden.lock has no entry for server '${id}', so its sandbox cannot be pinned yet. Capture one with: mcp-warden lock ${id}`);
    const { sandbox: before, ...rest } = extra;
    locks.warden.set(id, { ...rest, ...(hash ? { sandbox: hash } : {}) });
    return before;
  });
}
