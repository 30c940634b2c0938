import fs from 'node:fs';
import { WardenError, errnoOf } from '../error.js';
import { LockfileError, parseToolsLock, renderToolsLock, type LockEntry, type ToolsLock } from '../surface/lockfile.js';
import { parseWardenLock, renderWardenLock, type WardenLock, type WardenLockEntry } from '../surface/warden-lock.js';
import { writeAtomic } from './atomic.js';
import type { HomePaths } from './paths.js';
import type { Baseline } from '../canary/baseline.js';
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

/** Replaces one server's canary baselines in warden.lock (the server must be locked already). */
export function saveCanaryBaselines(paths: HomePaths, id: string, canaries: Record<string, Baseline>): void {
  const locks = loadLocks(paths);
  const extra = locks.warden.get(id);
  if (!extra) throw new WardenError('LOCK_MISSING', `warden.lock has no entry for server '${id}'. Capture one with: mcp-warden lock ${id}`);
  locks.warden.set(id, { ...extra, canaries });
  writeAtomic(paths.wardenLock, renderWardenLock(locks.warden));
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

/** Writes one server's entries into both locks (both files rewritten atomically, in sorted order); the
 * server's canary baselines are kept unless `extra` brings new ones. */
export function saveLockEntry(paths: HomePaths, id: string, entry: LockEntry, extra: WardenLockEntry): void {
  const locks = loadLocks(paths);
  const canaries = extra.canaries ?? locks.warden.get(id)?.canaries;
  locks.tools.set(id, entry);
  locks.warden.set(id, { ...extra, ...(canaries ? { canaries } : {}) });
  writeAtomic(paths.toolsLock, renderToolsLock(locks.tools));
  writeAtomic(paths.wardenLock, renderWardenLock(locks.warden));
}
