import fs from 'node:fs';
import path from 'node:path';
import { runScratch, unpublished } from './run-scratch.js';

// A pre-warmed digest cache for tests that enroll the reference servers' trees (4-5k files each, mostly the same
// files) in several homes of one run: after an `add`, its home's cache (cache/digests.ID.json, entries keyed by
// device and inode, each valid only for the size, mtime and ctime it was made for) is published in the run's
// scratch directory; before a later `add`, the new home's cache is seeded with every entry published so far, and
// that `add` reads only the files no entry vouches for (a changed file has another ctime, so a stale entry is a
// miss). The entries are the warden's own, made by the same warden for the same user. Without any (the first
// home, or a file run alone) `add` digests everything, as it always did.

const cacheFile = (home: string, id: string): string => path.join(home, 'cache', `digests.${id}.json`);

/** Before `add ID` in `home` (not made yet): its digest cache of `id`, holding every entry published in the run. */
export function seedDigestCache(home: string, id: string): void {
  const dir = runScratch('digest-caches');
  const entries: Record<string, string> = {};
  for (const name of fs.readdirSync(dir).sort()) Object.assign(entries, (JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as { entries: Record<string, string> }).entries);
  if (Object.keys(entries).length === 0) return;
  fs.mkdirSync(path.join(home, 'cache'), { recursive: true, mode: 0o700 });
  fs.writeFileSync(cacheFile(home, id), JSON.stringify({ version: 1, entries }), { mode: 0o600 });
}

/** After `add ID` in `home`: publishes its digest cache of `id` (whole, under a name of its own). */
export function publishDigestCache(home: string, id: string): void {
  const made = path.join(unpublished('digests'), 'digests.json');
  fs.copyFileSync(cacheFile(home, id), made);
  fs.renameSync(made, path.join(runScratch('digest-caches'), `${path.basename(path.dirname(made))}.json`));
}
