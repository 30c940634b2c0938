import fs from 'node:fs';
import path from 'node:path';

// A library is the system's (accepted without a digest, like a program found on the trusted PATH) when its
// realpath lies under a directory the distribution's package manager installs libraries into, and that file and
// every directory above it is owned by root and writable by no group or other user: only root replaces it (a
// Debian libc upgrade re-approves nothing). Anything else — a library under a home, /opt, /tmp, a directory of a
// RUNPATH, or a system directory someone made writable — is digested into the server's plan
// (docs/adr/0065-native-libraries.md).

const SYSTEM_DIRS = ['/lib', '/lib32', '/lib64', '/libx32', '/usr/lib', '/usr/lib32', '/usr/lib64', '/usr/libx32', '/usr/local/lib'];

/** Whether `p` (a directory) is owned by root and not writable by group or other. */
function rootOnly(p: string, memo: Map<string, boolean>): boolean {
  let ok = memo.get(p);
  if (ok === undefined) {
    try {
      const st = fs.lstatSync(p);
      ok = st.uid === 0 && (st.mode & 0o022) === 0 && !st.isSymbolicLink();
    } catch {
      ok = false;
    }
    memo.set(p, ok);
  }
  return ok;
}

/** Whether the file at `real` (a realpath) is a system library (see above). `memo` spans one launch's checks. */
export function isSystemLibrary(real: string, memo: Map<string, boolean> = new Map()): boolean {
  if (!path.isAbsolute(real) || !SYSTEM_DIRS.some((d) => real.startsWith(`${d}/`))) return false;
  let p = real;
  for (;;) {
    if (!rootOnly(p, memo)) return false;
    const up = path.dirname(p);
    if (up === p) return true;
    p = up;
  }
}
