import path from 'node:path';
import * as v from 'valibot';
import { DigestCache } from '../attest/cache.js';
import { writeJsonAtomic } from './atomic.js';
import { loadJsonFile } from './json-file.js';
import type { HomePaths } from './paths.js';
import { checkTrusted } from './perms.js';

// The cache file is a trust file (a forged entry would vouch for a file's digest): it is refused, like the
// others, if another user can write it, and an invalid one is an error, never silently discarded.

// Entries are checked for shape on every lookup (DigestCache.get), so the schema only checks the envelope:
// validating 5,000 entries with regular expressions here cost ~15 ms of every launch.
const cacheFileSchema = v.strictObject({
  version: v.literal(1),
  entries: v.record(v.string(), v.string()),
});

function cacheFile(paths: HomePaths): string {
  return path.join(paths.cacheDir, 'digests.json');
}

export function loadDigestCache(paths: HomePaths): DigestCache {
  // The directory too: whoever can write it can swap the file between the check and the read.
  checkTrusted(paths.cacheDir, 'the digest cache directory', 'file');
  const loaded = loadJsonFile(cacheFile(paths), 'the digest cache', cacheFileSchema, true, true);
  return new DigestCache(loaded?.entries ?? {});
}

/** Writes the cache back if anything was added; a failure to write only costs speed, so it is reported, not fatal. */
export function saveDigestCache(paths: HomePaths, cache: DigestCache): string | undefined {
  if (!cache.dirty) return undefined;
  try {
    checkTrusted(paths.cacheDir, 'the digest cache directory', 'file');
    writeJsonAtomic(cacheFile(paths), { version: 1, entries: cache.toJSON() });
    cache.dirty = false;
    return undefined;
  } catch (err) {
    return `could not write the digest cache ${cacheFile(paths)}: ${(err as Error).message}`;
  }
}
