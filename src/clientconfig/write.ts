import fs from 'node:fs';
import path from 'node:path';
import { WardenError } from '../error.js';
import { writeAtomic, writeAtomicKeepingMode } from '../store/atomic.js';
import type { HomePaths } from '../store/paths.js';
import { checkTrusted } from '../store/perms.js';
import type { ClientConfig } from './read.js';

// Writing a client's configuration file, for `import` and `unwrap`: a backup in the warden's home first, then
// the new text, only if the file is still what was read.

/** A copy of a client file in the home, before it is written (owner-only: client files can hold secrets). */
export function backup(paths: HomePaths, file: string, text: string): string {
  fs.mkdirSync(paths.backupsDir, { recursive: true, mode: 0o700 });
  checkTrusted(paths.backupsDir, 'the backups directory', 'file');
  const dest = path.join(paths.backupsDir, `${path.basename(file)}.${new Date().toISOString().replace(/[:.]/g, '-')}`);
  writeAtomic(dest, text);
  return dest;
}

/** Writes the client file unless it changed since it was read (a client may rewrite its own file at any time). */
export function rewriteClientFile(cfg: ClientConfig, text: string): void {
  if (fs.readFileSync(cfg.file, 'utf8') !== cfg.text) {
    throw new WardenError('CLIENT_CONFIG_CHANGED', `${cfg.file} changed while the warden was working on it (did the client rewrite it?); it was not written. Run the same command again.`);
  }
  writeAtomicKeepingMode(cfg.file, text);
}
