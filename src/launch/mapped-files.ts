import fs from 'node:fs';
import { WardenError } from '../error.js';
import { printable } from '../escape.js';
import type { StatKey } from '../attest/stat-key.js';
import { isSystemLibrary } from '../attest/system-library.js';

// After spawn, the code a server process has mapped executable must be what was attested: each file behind an
// executable mapping in /proc/PID/maps is one of the digested inodes (the executable, its non-system libraries)
// or a system library (attest/system-library.ts) still at the path the mapping names. A library swapped in
// between its digest and ld.so's open shows here as another inode. Anonymous mappings (a JIT's) are no file
// and not judged. Checked once the process has spawned and again before its first line is relayed, when ld.so
// has mapped every DT_NEEDED object; its constructors have run by then (docs/adr/0065-native-libraries.md).

const MAX_MAPS = 4 * 1024 * 1024;

/** glibc's makedev, as node's stat reports st_dev. */
function makedev(major: bigint, minor: bigint): bigint {
  return ((major & 0xfffn) << 8n) | ((major & ~0xfffn) << 32n) | (minor & 0xffn) | ((minor & ~0xffn) << 12n);
}

/** The (dev:ino) and path of every file-backed executable mapping of `pid`. */
function executableMappings(pid: number): Array<{ inode: string; path: string }> {
  let text: string;
  try {
    const fd = fs.openSync(`/proc/${pid}/maps`, 'r');
    try {
      const buf = Buffer.allocUnsafe(MAX_MAPS);
      let n = 0;
      for (;;) {
        const got = fs.readSync(fd, buf, n, buf.length - n, null);
        if (got === 0) break;
        n += got;
        if (n === buf.length) throw new Error(`more than ${MAX_MAPS} bytes of mappings`);
      }
      text = buf.toString('utf8', 0, n);
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    throw new WardenError('LIBRARY_UNATTESTED', `cannot read /proc/${pid}/maps to verify the code the server mapped: ${(err as Error).message}`);
  }
  const out: Array<{ inode: string; path: string }> = [];
  for (const line of text.split('\n')) {
    const m = /^\S+ (\S{4}) \S+ ([0-9a-f]+):([0-9a-f]+) (\d+)\s*(.*)$/.exec(line);
    if (!m || !(m[1] as string).includes('x') || m[4] === '0') continue;
    const dev = makedev(BigInt(`0x${m[2]}`), BigInt(`0x${m[3]}`));
    out.push({ inode: `${dev}:${m[4]}`, path: m[5] as string });
  }
  return out;
}

/** Whether the system library at `p` is still the inode `inode` ("dev:ino") that is mapped. */
function systemAt(p: string, inode: string, memo: Map<string, boolean>): boolean {
  try {
    const st = fs.statSync(p, { bigint: true });
    return `${st.dev}:${st.ino}` === inode && isSystemLibrary(fs.realpathSync(p), memo);
  } catch {
    return false;
  }
}

/** Throws LIBRARY_UNATTESTED when `pid` maps executable code from a file that is neither one of `attested` nor a
 *  system library. */
export function verifyMappedCode(pid: number, attested: readonly StatKey[], serverId: string): void {
  const known = new Set(attested.map((k) => `${k.dev}:${k.ino}`));
  const memo = new Map<string, boolean>();
  for (const m of executableMappings(pid)) {
    if (known.has(m.inode) || systemAt(m.path, m.inode, memo)) continue;
    throw new WardenError('LIBRARY_UNATTESTED', `server '${serverId}' mapped code from "${printable(m.path, 200)}" (inode ${m.inode}), which is neither a system library nor a file digested for this launch (a library replaced between its digest and its load?); the session was ended. Run 'mcp-warden status ${serverId}'.`);
  }
}
