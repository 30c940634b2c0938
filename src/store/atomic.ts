import fs from 'node:fs';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';

/** Writes a file atomically (temp file, fsync, rename) with owner-only permissions, then syncs the directory. */
export function writeAtomic(file: string, data: string | Buffer): void {
  writeFileAtomic.sync(file, data, { mode: 0o600, fsync: true });
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
