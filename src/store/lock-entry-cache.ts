import fs from 'node:fs';
import path from 'node:path';
import * as v from 'valibot';
import { keyString, statKey } from '../attest/stat-key.js';
import { WardenError, errnoOf } from '../error.js';
import { parseToolsLock, renderToolsLock } from '../surface/lockfile.js';
import { parseWardenLock, renderWardenLock } from '../surface/warden-lock.js';
import { writeJsonAtomic } from './atomic.js';
import { loadJsonFile } from './json-file.js';
import { loadLocks, parseLock, readLockBytes, type Locks } from './locks.js';
import type { HomePaths } from './paths.js';
import { checkTrusted } from './perms.js';
import { SERVER_ID_RE } from './servers.js';

// What `run ID` needs of tools.lock and warden.lock is ID's entry in each, but each file is valid or invalid as a
// whole (SPEC §7: any stored hash that does not match its content refuses the file), and reading and checking
// every entry of a crowded home cost a launch 22-31 ms. cache/locks.ID.json keeps, for each lock file, the stat
// key (dev, ino, size, mtime, ctime) of the bytes last validated whole and ID's entry in them, rendered as a
// lock of one server; while both files still have those keys, a launch parses only that
// (docs/adr/0035-lock-entries-cached-per-server.md). A file changed in any way has another ctime, which user
// space cannot set back, or another inode: then both files are read and validated whole, as before, and the
// cache is written again. It is a trust file like the digest cache.

const entrySchema = v.strictObject({ key: v.string(), lock: v.string() });
const cacheSchema = v.strictObject({ version: v.literal(1), tools: entrySchema, warden: entrySchema });

export const LOCK_CACHE_FILE = /^locks\.[A-Za-z0-9][A-Za-z0-9._-]{0,63}\.json$/;

/** The stat key of the lock file now ('absent' if there is none). */
function currentKey(file: string, label: string): string {
  checkTrusted(file, label, 'file');
  try {
    return keyString(statKey(fs.statSync(file, { bigint: true })));
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return 'absent';
    throw new WardenError('LOCK_INVALID', `${label} at ${file} cannot be read (${errnoOf(err) ?? String(err)}).`);
  }
}

/**
 * tools.lock and warden.lock as `run ID` needs them: whole when they were read whole, or only ID's entries when
 * the files are the very ones validated whole before. Refused (LOCK_INVALID) as loadLocks refuses them.
 */
export function loadLocksOf(paths: HomePaths, id: string): Locks {
  if (!SERVER_ID_RE.test(id)) return loadLocks(paths); // no such server: the launch refuses it by name
  checkTrusted(paths.cacheDir, 'the digest cache directory', 'file');
  const file = path.join(paths.cacheDir, `locks.${id}.json`);
  const label = `the lock cache of server '${id}'`;
  const cached = loadJsonFile(file, label, cacheSchema, true, true);
  if (cached && cached.tools.key === currentKey(paths.toolsLock, 'tools.lock') && cached.warden.key === currentKey(paths.wardenLock, 'warden.lock')) {
    return {
      tools: parseLock(file, label, () => parseToolsLock(cached.tools.lock)),
      warden: parseLock(file, label, () => parseWardenLock(Buffer.from(cached.warden.lock))),
    };
  }
  const tools = readLockBytes(paths.toolsLock, 'tools.lock');
  const warden = readLockBytes(paths.wardenLock, 'warden.lock');
  const locks: Locks = {
    tools: tools.bytes ? parseLock(paths.toolsLock, 'tools.lock', () => parseToolsLock(tools.bytes as Buffer)) : new Map(),
    warden: warden.bytes ? parseLock(paths.wardenLock, 'warden.lock', () => parseWardenLock(warden.bytes as Buffer)) : new Map(),
  };
  if (tools.key && warden.key) {
    const ownTools = locks.tools.get(id);
    const ownWarden = locks.warden.get(id);
    try {
      writeJsonAtomic(file, {
        version: 1,
        tools: { key: tools.key, lock: renderToolsLock(new Map(ownTools ? [[id, ownTools]] : [])) },
        warden: { key: warden.key, lock: renderWardenLock(new Map(ownWarden ? [[id, ownWarden]] : [])) },
      });
    } catch {
      // Only speed is lost: the next launch reads both files whole again.
    }
  }
  return locks;
}
