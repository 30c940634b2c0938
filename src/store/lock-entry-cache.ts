import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as v from 'valibot';
import { WardenError } from '../error.js';
import { LockfileError, parseToolsLock, serializeToolsLock } from '../surface/lockfile.js';
import { parseWardenLock, renderWardenLock } from '../surface/warden-lock.js';
import { writeJsonAtomic } from './atomic.js';
import { loadJsonFile } from './json-file.js';
import { parseLock, readLockBytes, type Locks } from './locks.js';
import type { HomePaths } from './paths.js';
import { checkTrusted } from './perms.js';
import { SERVER_ID_PATTERN } from './servers.js';

// What `run ID` needs of tools.lock and warden.lock is ID's entry in each, but each file is valid or invalid as a
// whole (SPEC §7: any stored hash that does not match its content refuses the file), and checking every entry of
// a crowded home cost a launch 22-31 ms. cache/locks.ID.json keeps the SHA-256 of each lock file's bytes as last
// validated whole, and ID's entries of those bytes, as read; a launch reads both files and hashes them (~1 ms),
// and while both hashes match it parses only ID's entries (docs/adr/0035-lock-entries-cached-per-server.md).
// Keyed by content, not by stat keys: a store through a shared mapping changes a file without changing its
// ctime until writeback (found in review: test/attack21/lock-cache-mmap-write.test.ts). It is a trust file, like
// the digest cache; one the warden would not write back whole (over MAX_CACHE_TEXT) is not written.

const entrySchema = v.strictObject({ sha256: v.pipe(v.string(), v.regex(/^([0-9a-f]{64}|absent)$/)), lock: v.string() });
const cacheSchema = v.strictObject({ version: v.literal(1), tools: entrySchema, warden: entrySchema });

export const LOCK_CACHE_FILE = new RegExp(`^locks\\.${SERVER_ID_PATTERN}\\.json$`);
/** The cache file is read with loadJsonFile's 16 MiB bound and its strings are escaped once more: well below. */
const MAX_CACHE_TEXT = 4 * 1024 * 1024;

const sha256 = (bytes: Buffer | undefined): string => (bytes ? createHash('sha256').update(bytes).digest('hex') : 'absent');

/** `parse()` of the warden's own cache, refused as an invalid cache (not a lockfile to restore) naming it. */
function parseCached<T>(file: string, id: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof LockfileError) {
      throw new WardenError('FILE_INVALID', `the lock cache of server '${id}' at ${file} does not hold a valid lock: ${err.reason}. It is a cache: delete it, and the next launch writes it again.`);
    }
    throw err;
  }
}

/** True when every entry of both locks is the server's own (a cache of another id's, on a filesystem that folds
 *  case, is not). */
const onlyOwn = (locks: Locks, id: string): boolean => [...locks.tools.keys(), ...locks.warden.keys()].every((k) => k === id);

/**
 * tools.lock and warden.lock as `run ID` needs them: whole when they were read whole, or only ID's entries when
 * both files hold the very bytes validated whole before. Refused (LOCK_INVALID) as loadLocks refuses them.
 * `known`: ID is a configured server (nothing is remembered for an id that is not).
 */
export function loadLocksOf(paths: HomePaths, id: string, known: boolean): Locks {
  const tools = readLockBytes(paths.toolsLock, 'tools.lock');
  const warden = readLockBytes(paths.wardenLock, 'warden.lock');
  const hashes = { tools: sha256(tools.bytes), warden: sha256(warden.bytes) };
  const file = known && LOCK_CACHE_FILE.test(`locks.${id}.json`) ? path.join(paths.cacheDir, `locks.${id}.json`) : undefined;
  if (file) {
    checkTrusted(paths.cacheDir, 'the digest cache directory', 'file');
    const cached = loadJsonFile(file, `the lock cache of server '${id}'`, cacheSchema, true, true);
    if (cached && cached.tools.sha256 === hashes.tools && cached.warden.sha256 === hashes.warden) {
      const own: Locks = {
        tools: parseCached(file, id, () => parseToolsLock(cached.tools.lock)),
        warden: parseCached(file, id, () => parseWardenLock(Buffer.from(cached.warden.lock))),
      };
      if (onlyOwn(own, id)) return own;
    }
  }
  const locks: Locks = {
    tools: tools.bytes ? parseLock(paths.toolsLock, 'tools.lock', () => parseToolsLock(tools.bytes as Buffer)) : new Map(),
    warden: warden.bytes ? parseLock(paths.wardenLock, 'warden.lock', () => parseWardenLock(warden.bytes as Buffer)) : new Map(),
  };
  if (file) remember(file, id, locks, hashes);
  return locks;
}

function remember(file: string, id: string, locks: Locks, hashes: { tools: string; warden: string }): void {
  const ownTools = locks.tools.get(id);
  const ownWarden = locks.warden.get(id);
  try {
    const tools = serializeToolsLock(new Map(ownTools ? [[id, ownTools]] : []));
    const warden = renderWardenLock(new Map(ownWarden ? [[id, ownWarden]] : []));
    if (tools.length + warden.length > MAX_CACHE_TEXT) {
      fs.rmSync(file, { force: true });
      return;
    }
    writeJsonAtomic(file, { version: 1, tools: { sha256: hashes.tools, lock: tools }, warden: { sha256: hashes.warden, lock: warden } });
  } catch {
    // Only speed is lost: the next launch validates both files whole again.
  }
}
