import fs from 'node:fs';
import { checkHomeChain } from './perms.js';
import type { HomePaths } from './paths.js';

/** Creates the home and its subdirectories (owner-only) if missing, then checks that no one else can write it. */
export function openHome(paths: HomePaths, create: boolean): void {
  if (create) {
    fs.mkdirSync(paths.home, { recursive: true, mode: 0o700 });
    fs.mkdirSync(paths.cacheDir, { recursive: true, mode: 0o700 });
    fs.mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
  }
  checkHomeChain(paths.home);
}
