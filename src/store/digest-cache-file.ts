import fs from 'node:fs';
import path from 'node:path';
import * as v from 'valibot';
import { DigestCache } from '../attest/cache.js';
import { writeJsonAtomic } from './atomic.js';
import { loadJsonFile } from './json-file.js';
import type { HomePaths } from './paths.js';
import { checkTrusted } from './perms.js';
import { SERVER_ID_PATTERN } from './servers.js';

// The digest cache, one file per server (cache/digests.ID.json): a launch reads the entries of its own server's
// files, not those of every tree enrolled (one file for all cost a one-file server's launch ~15-20 ms in a home
// with server-everything, -filesystem and -memory beside it; docs/adr/0034-digest-cache-per-server.md). A file
// that two servers share has an entry in each. Each file is a trust file (a forged entry would vouch for a
// file's digest): it is refused, like the others, if another user can write it, and an invalid one is an error,
// never silently discarded.

// Entries are checked for shape on every lookup (DigestCache.get), so the schema only checks the envelope:
// validating 5,000 entries with regular expressions here cost ~15 ms of every launch.
const cacheFileSchema = v.strictObject({
  version: v.literal(1),
  entries: v.record(v.string(), v.string()),
});

/** The file of the one cache for every server that releases before this layout; removed at the first save. */
const LEGACY = 'digests.json';
export const CACHE_FILE = new RegExp(`^digests\\.${SERVER_ID_PATTERN}\\.json$`);

/** `id` is a server id (SERVER_ID_RE), so the name stays inside the cache directory. */
export function digestCacheFile(paths: HomePaths, id: string): string {
  const name = `digests.${id}.json`;
  if (!CACHE_FILE.test(name)) throw new Error(`not a server id: ${JSON.stringify(id)}`);
  return path.join(paths.cacheDir, name);
}

/** The cache of server `id`'s files. */
export function loadDigestCache(paths: HomePaths, id: string): DigestCache {
  // The directory too: whoever can write it can swap the file between the check and the read.
  checkTrusted(paths.cacheDir, 'the digest cache directory', 'file');
  const loaded = loadJsonFile(digestCacheFile(paths, id), `the digest cache of server '${id}'`, cacheFileSchema, true, true);
  return new DigestCache(loaded?.entries ?? {});
}

/** Writes server `id`'s cache back if anything was added; a failure to write only costs speed, so it is
 *  reported, not fatal. */
export function saveDigestCache(paths: HomePaths, id: string, cache: DigestCache): string | undefined {
  if (!cache.dirty) return undefined;
  const file = digestCacheFile(paths, id);
  try {
    checkTrusted(paths.cacheDir, 'the digest cache directory', 'file');
    writeJsonAtomic(file, { version: 1, entries: cache.toJSON() });
    cache.dirty = false;
  } catch (err) {
    return `could not write the digest cache ${file}: ${(err as Error).message}`;
  }
  const legacy = path.join(paths.cacheDir, LEGACY);
  try {
    fs.rmSync(legacy, { force: true });
  } catch (err) {
    return `could not remove ${legacy}, the digest cache of earlier releases, which is no longer read: ${(err as Error).message}. Remove it yourself.`;
  }
  return undefined;
}
