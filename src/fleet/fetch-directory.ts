import fs from 'node:fs';
import path from 'node:path';
import { WardenError, errnoOf } from '../error.js';
import { writableChainAt } from '../store/perms.js';
import { FILES, fetchFailed, sourceInsecure, tooLarge, type FetchContext, type Fetched } from './fetch-common.js';

// A directory source: a shared directory (an NFS mount, a synced folder) where the fleet publishes the bundle and
// its signature. The files are opened without following a link (O_NOFOLLOW) and without blocking on a FIFO, and
// checked on the open descriptor: a regular file, at most the cap, writable by nobody but its owner. The directories
// below the configured one must be real directories writable by their owner only. The owner is not checked: a
// shared directory is written by the publisher's account, and what is trusted is the signature, not the file's
// owner; a file anyone on this machine can write would let anyone here withhold updates (docs/adr/0025).

const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

function insecure(p: string, what: string, mode: number): WardenError {
  return sourceInsecure(p, `${what} of the fleet source`, mode, 'anyone who can write it could withhold or replace bundles');
}

async function checkDirectories(root: string, inner: string): Promise<void> {
  // Above the configured directory: anyone who can write one could put another directory in its place.
  const above = writableChainAt(path.dirname(path.resolve(root)));
  if (above) throw insecure(above.path, 'directory above the configured directory', above.mode);
  const parts = inner.split('/').slice(0, -1);
  let dir = root;
  for (const p of ['', ...parts]) {
    dir = p === '' ? root : path.join(dir, p);
    let st: fs.Stats;
    try {
      st = p === '' ? await fs.promises.stat(dir) : await fs.promises.lstat(dir);
    } catch (err) {
      throw fetchFailed(root, `${dir} cannot be read (${errnoOf(err) ?? String(err)})`);
    }
    if (!st.isDirectory()) throw fetchFailed(root, `${dir} is not a directory${st.isSymbolicLink() ? ' (a symbolic link: give the path it points to)' : ''}`);
    if (st.mode & 0o022) throw insecure(dir, 'directory', st.mode);
  }
}

async function readCapped(file: string, what: string, max: number): Promise<Buffer> {
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(file, OPEN_FLAGS);
  } catch (err) {
    const code = errnoOf(err);
    throw fetchFailed(file, code === 'ELOOP' ? `the ${what} is a symbolic link; the daemon reads only a real file there` : code === 'ENOENT' ? `there is no ${what} there` : `the ${what} cannot be opened (${code ?? String(err)})`);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw fetchFailed(file, `the ${what} is not a regular file`);
    if (st.mode & 0o022) throw insecure(file, what, st.mode);
    if (st.size > max) throw tooLarge(file, what, max, st.size);
    // Read one byte more than the cap: a file that grows while it is read is refused too.
    const buf = Buffer.alloc(Math.min(st.size, max) + 1);
    let n = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, null);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n > max) throw tooLarge(file, what, max);
      if (n === buf.length) break;
    }
    if (n !== st.size) throw fetchFailed(file, `the ${what} changed while it was read`);
    return buf.subarray(0, n);
  } finally {
    await fh.close();
  }
}

export async function fetchFromDirectory(source: { directory: string; path: string }, ctx: FetchContext): Promise<Fetched> {
  await checkDirectories(source.directory, source.path);
  const file = path.join(source.directory, source.path);
  const [bundle, signature] = await Promise.all(FILES.map((f) => readCapped(file + f.suffix, f.what, f.max)));
  if (ctx.signal.aborted) throw fetchFailed(file, 'aborted');
  return { bundle: bundle as Buffer, signature: signature as Buffer };
}
