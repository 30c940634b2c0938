import fs from 'node:fs';
import path from 'node:path';
import { WardenError, errnoOf } from '../error.js';

// sshd StrictModes, for the warden's trust files: a file or directory the warden trusts must be owned by the
// current user or root, and writable by nobody else. Ancestors of the home are checked too, except that a
// root-owned directory with the sticky bit (like /tmp) is accepted, since others cannot replace our entries.

const uid = typeof process.getuid === 'function' ? process.getuid() : 0;

function describe(mode: number): string {
  const who = [mode & 0o020 ? 'group' : '', mode & 0o002 ? 'others' : ''].filter(Boolean).join(' and ');
  return `writable by ${who} (mode ${(mode & 0o7777).toString(8).padStart(4, '0')})`;
}

/** Refuses a trusted file or directory that another user could write. Missing paths are not checked here. */
export function checkTrusted(target: string, label: string, isHomeOrFile: 'home' | 'file'): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(target);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return;
    throw new WardenError('FILE_UNREADABLE', `cannot inspect ${label} at ${target}: ${String(err)}`);
  }
  const code = isHomeOrFile === 'home' ? 'HOME_INSECURE' : 'FILE_INSECURE';
  if (st.isSymbolicLink()) {
    throw new WardenError(code, `${label} at ${target} is a symbolic link; the warden trusts only a real file there. Replace it with the file it points to.`);
  }
  if (st.uid !== uid && st.uid !== 0) {
    throw new WardenError(code, `${label} at ${target} is owned by uid ${st.uid}, not by you (uid ${uid}) or root. Run: chown ${uid} ${target}`);
  }
  if (st.mode & 0o022) {
    throw new WardenError(code, `${label} at ${target} is ${describe(st.mode)}. Run: chmod go-w ${target}`);
  }
}

/** Checks the home directory and each directory above it. */
export function checkHomeChain(home: string): void {
  checkTrusted(home, 'the warden home', 'home');
  let dir = path.dirname(home);
  for (;;) {
    let st: fs.Stats;
    try {
      st = fs.statSync(dir);
    } catch {
      break;
    }
    const stickyRoot = (st.mode & 0o1000) !== 0 && st.uid === 0;
    if (!stickyRoot && ((st.uid !== uid && st.uid !== 0) || st.mode & 0o022)) {
      throw new WardenError(
        'HOME_INSECURE',
        `the directory ${dir}, above the warden home ${home}, is ${st.mode & 0o022 ? describe(st.mode) : `owned by uid ${st.uid}`}, so another user could replace the home. Move the home (--home) or run: chmod go-w ${dir}`,
      );
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
}

/**
 * The first of `p` and the directories above it that someone other than its owner could write (group or others),
 * as checkHomeChain judges the home's (which also requires the owner): a root-owned directory with the sticky bit
 * (/tmp) is accepted, since others cannot replace entries in it. Undefined when the chain is safe. Whoever can
 * write one of these can replace what lies below it: the git the daemon runs, a directory source it reads.
 */
export function writableChainAt(p: string): { path: string; mode: number } | undefined {
  for (let at = p; ; at = path.dirname(at)) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(at);
    } catch {
      return undefined; // what does not exist is reported by the caller's own read
    }
    const stickyRoot = st.isDirectory() && (st.mode & 0o1000) !== 0 && st.uid === 0;
    if (!st.isSymbolicLink() && st.mode & 0o022 && !stickyRoot) return { path: at, mode: st.mode };
    if (path.dirname(at) === at) return undefined;
  }
}
