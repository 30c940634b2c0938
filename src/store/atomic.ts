import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WardenError, errnoOf } from '../error.js';

// Atomic writes: a temporary file beside the target (created exclusively, owner-only), every byte written, fsync,
// rename over the target, fsync of the directory. Written here rather than with write-file-atomic: its sync path
// ignores the count `writeSync` returns, so a short write (a file size limit: EFBIG comes only on the next write)
// was renamed into place truncated, measured with strace under `prlimit --fsize` (docs/adr/0027-trust-commit-journal.md).

/** Writes a file atomically with owner-only permissions. */
export function writeAtomic(file: string, data: string | Buffer): void {
  writeWithMode(file, data, 0o600);
}

/** Writes a file that is not the warden's (a client's configuration) atomically, keeping its mode. */
export function writeAtomicKeepingMode(file: string, data: string): void {
  writeWithMode(file, data, fs.statSync(file).mode & 0o7777);
}

/** Serializes a value as the warden writes every JSON file: two-space indent, trailing newline. */
export function writeJsonAtomic(file: string, value: unknown): void {
  writeAtomic(file, JSON.stringify(value, null, 2) + '\n');
}

/** fsyncs a directory, so a rename or unlink in it is durable (some filesystems refuse: the rename is still atomic). */
export function syncDir(dir: string): void {
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

function writeAll(fd: number, bytes: Buffer): void {
  for (let at = 0; at < bytes.byteLength; ) at += fs.writeSync(fd, bytes, at, bytes.byteLength - at);
}

/** A failed write (a full disk, a file size limit, permissions) is a refusal that names the file: the target was
 *  not touched, and the temporary file is removed. */
function writeWithMode(file: string, data: string | Buffer, mode: number): void {
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  let fd: number | undefined;
  try {
    fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, mode);
    fs.fchmodSync(fd, mode); // the umask does not narrow what was asked for, nor widen it
    writeAll(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, file);
  } catch (err) {
    try {
      if (fd !== undefined) fs.closeSync(fd);
      fs.rmSync(tmp, { force: true });
    } catch {
      // What could not be removed is a temporary file no one reads; the refusal below is what matters.
    }
    const code = errnoOf(err);
    if (code === undefined) throw err;
    throw new WardenError('FILE_UNWRITABLE', `${file} could not be written (${code}: ${(err as Error).message}); it keeps its previous content. Free space on its filesystem or fix its directory's permissions, then run the command again.`);
  }
  syncDir(path.dirname(file));
}
