import fs from 'node:fs';
import path from 'node:path';
import type { HomePaths } from './paths.js';
import { withFileLocks } from './update.js';

// One lock for the sealed store: `install` and `upgrade` hold it from the moment they create an entry until
// servers.json names it, and `store gc` while it decides what no server names and removes it. So gc never
// removes an entry a server is about to name. Its lock directory (<home>/store/.lock.lock) is dot-named: never
// taken for an entry.

export async function withStoreLock<R>(paths: HomePaths, fn: () => R | Promise<R>): Promise<R> {
  fs.mkdirSync(paths.storeDir, { recursive: true, mode: 0o700 });
  return withFileLocks([path.join(paths.storeDir, '.lock')], 'the package store', () => fn());
}
