import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type WriteFileAtomic from 'write-file-atomic';

// Loaded on first write: most commands only read, and its import costs ~30 ms (docs/performance.md).
const require = createRequire(import.meta.url);
let writeFileAtomic: typeof WriteFileAtomic | undefined;

/** Writes a file atomically (temp file, fsync, rename) with owner-only permissions, then syncs the directory. */
export function writeAtomic(file: string, data: string | Buffer): void {
  writeFileAtomic ??= require('write-file-atomic') as typeof WriteFileAtomic;
  writeFileAtomic.sync(file, data, { mode: 0o600, fsync: true });
  syncDir(path.dirname(file));
}

/** Writes a file that is not the warden's (a client's configuration) atomically, keeping its mode. */
export function writeAtomicKeepingMode(file: string, data: string): void {
  writeFileAtomic ??= require('write-file-atomic') as typeof WriteFileAtomic;
  const mode = fs.statSync(file).mode & 0o7777;
  writeFileAtomic.sync(file, data, { mode, fsync: true });
  syncDir(path.dirname(file));
}

/** Serializes a value as the warden writes every JSON file: two-space indent, trailing newline. */
export function writeJsonAtomic(file: string, value: unknown): void {
  writeAtomic(file, JSON.stringify(value, null, 2) + '\n');
}

function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
