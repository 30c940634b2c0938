import fs from 'node:fs';
import { WardenError, errnoOf } from '../error.js';
import { LockfileError, parseToolsLock, renderToolsLock, type LockEntry, type ToolsLock } from '../surface/lockfile.js';
import { parseWardenLock, renderWardenLock, type WardenLock, type WardenLockEntry } from '../surface/warden-lock.js';
import { writeAtomic } from './atomic.js';
import type { HomePaths } from './paths.js';
import { checkTrusted } from './perms.js';

// tools.lock and warden.lock in the home: trust files (refused if others can write them), parsed strictly;
// a missing file is an empty lock, a corrupt one is a lockfile error (exit 4), never "start afresh".

function readOrEmpty<T>(file: string, label: string, parse: (b: Buffer) => Map<string, T>): Map<string, T> {
  checkTrusted(file, label, 'file');
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return new Map();
    throw new WardenError('LOCK_INVALID', `${label} at ${file} cannot be read (${errnoOf(err) ?? String(err)}).`);
  }
  try {
    return parse(bytes);
  } catch (err) {
    if (err instanceof LockfileError) {
      throw new WardenError('LOCK_INVALID', `${label} at ${file} is not a valid lockfile: ${err.reason}. Restore it from version control, or re-create the entry with 'mcp-warden pin <id>'.`);
    }
    throw err;
  }
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

/** Writes one server's entries into both locks (both files rewritten atomically, in sorted order). */
export function saveLockEntry(paths: HomePaths, id: string, entry: LockEntry, extra: WardenLockEntry): void {
  const locks = loadLocks(paths);
  locks.tools.set(id, entry);
  locks.warden.set(id, extra);
  writeAtomic(paths.toolsLock, renderToolsLock(locks.tools));
  writeAtomic(paths.wardenLock, renderWardenLock(locks.warden));
}
