import fs from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// node's compile cache for the warden's own code (node 22.1+, module.enableCompileCache): V8's compiled code of
// the bundle's modules is kept on disk and reused by the next process, ~20 ms of CPU of every `run` on node 24
// (docs/adr/0056-launch-on-node-24.md). It lives beside the code it caches, in dist/.compile-cache/:
// - a cache never changes what runs by being stale: node uses an entry only when the source it was made from
//   has the same length and checksum as the file being compiled, and V8 only for its own version and flags;
//   otherwise the file is compiled from source (and the entry rewritten);
// - a forged entry would, so the directory is one that only those who can already rewrite the warden's code can
//   write: inside dist/, made owner-only by the warden's user, refused if it is a link, another user's, or open to
//   others (then no cache: the code compiles from source, as on node 20). A server never gets it: its environment
//   is built from nothing (launch/env.ts), and its module guard keeps node's compile cache off in it.

/** dist/.compile-cache from dist/bundle/ (the bundle) and dist/<folder>/ (tsc's output) alike. */
const CACHE_DIR = (): string => path.join(fileURLToPath(new URL('.', import.meta.url)), '..', '.compile-cache');

interface CompileCacheApi {
  enableCompileCache?: (dir: string) => { status: number };
}

/** Whether `dir` is a directory of this user's that no one else may write (made so when absent). */
function ownerOnlyDir(dir: string): boolean {
  const uid = process.geteuid?.();
  if (uid === undefined) return false;
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return false; // dist/ not ours to write: no cache
  }
  try {
    const st = fs.lstatSync(dir);
    return st.isDirectory() && st.uid === uid && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/** Turns node's compile cache on for the modules this process imports from now on, where node has one and the
 *  directory passes; otherwise nothing changes. Never throws. */
export function enableOwnCompileCache(): void {
  const enable = (Module as unknown as CompileCacheApi).enableCompileCache;
  if (typeof enable !== 'function') return;
  try {
    const dir = CACHE_DIR();
    if (ownerOnlyDir(dir)) enable(dir);
  } catch {
    // a cache is an aid: without it the code compiles from source
  }
}
