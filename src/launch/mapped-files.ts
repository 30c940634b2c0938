import fs from 'node:fs';
import { WardenError } from '../error.js';
import { printable } from '../escape.js';
import type { StartupObject } from '../attest/native.js';

// After spawn, the objects ld.so mapped must be those the warden resolved and judged (attest/native.ts), read from
// /proc/PID/maps: a file mapped at the path of a resolved object must be that object's inode (a library renamed
// over the digested one between digest and ld.so's open is another inode), and once the server has written its
// first line (ld.so has mapped every DT_NEEDED object by then) each name it needed must be mapped from one of the
// inodes resolved for it (a library planted earlier in the search path after resolution is loaded instead, and
// the resolved one is missing). Files mapped by `dlopen` later (python's extension modules, node's addons) are
// neither required nor refused here: not claimed. The constructors of what was mapped have run by the time this
// is read (docs/adr/0065-native-libraries.md).

const MAX_MAPS = 16 * 1024 * 1024;

/** glibc's makedev, as node's stat reports st_dev. */
function makedev(major: bigint, minor: bigint): bigint {
  return ((major & 0xfffn) << 8n) | ((major & ~0xfffn) << 32n) | (minor & 0xffn) | ((minor & ~0xffn) << 12n);
}

/** The (dev:ino) and path of every file-backed mapping of `pid` (a file deleted or replaced since shows its old path). */
function fileMappings(pid: number): Array<{ inode: string; path: string }> {
  let text: string;
  try {
    // The kernel bounds it (vm.max_map_count mappings, 65,530 by default: about 6 MiB); the cap is the warden's.
    const raw = fs.readFileSync(`/proc/${pid}/maps`);
    if (raw.length > MAX_MAPS) throw new Error(`more than ${MAX_MAPS} bytes of mappings`);
    text = raw.toString('utf8');
  } catch (err) {
    throw new WardenError('LIBRARY_UNATTESTED', `cannot read /proc/${pid}/maps to verify the code the server mapped: ${(err as Error).message}`);
  }
  const out: Array<{ inode: string; path: string }> = [];
  for (const line of text.split('\n')) {
    const m = /^\S+ (\S{4}) \S+ ([0-9a-f]+):([0-9a-f]+) (\d+)\s*(.*)$/.exec(line);
    if (!m || m[4] === '0') continue;
    const dev = makedev(BigInt(`0x${m[2]}`), BigInt(`0x${m[3]}`));
    out.push({ inode: `${dev}:${m[4]}`, path: (m[5] as string).replace(/ \(deleted\)$/, '') });
  }
  return out;
}

/** Throws LIBRARY_UNATTESTED when `pid` maps, at the path of an object resolved for it, another file, or (when
 *  `complete`: ld.so is done) maps none of the objects resolved for a name it needed. */
export function verifyMappedCode(pid: number, startup: readonly StartupObject[], serverId: string, complete: boolean): void {
  if (startup.length === 0) return;
  const maps = fileMappings(pid);
  const byPath = new Map<string, Set<string>>();
  for (const m of maps) byPath.set(m.path, (byPath.get(m.path) ?? new Set()).add(m.inode));
  for (const o of startup) {
    for (const p of new Set([o.path, o.realpath])) {
      const other = [...(byPath.get(p) ?? [])].find((i) => i !== o.inode);
      if (other) throw new WardenError('LIBRARY_UNATTESTED', `server '${serverId}' mapped ${p} as inode ${other}, not the inode ${o.inode} the warden resolved and judged there (the library was replaced between its digest and its load?); the session was ended. Run 'mcp-warden status ${serverId}'.`);
    }
  }
  if (!complete) return;
  const mapped = new Set(maps.map((m) => m.inode));
  const names = new Map<string, StartupObject[]>();
  for (const o of startup) names.set(o.as, [...(names.get(o.as) ?? []), o]);
  for (const [name, objects] of names) {
    if (objects.some((o) => mapped.has(o.inode))) continue;
    throw new WardenError('LIBRARY_UNATTESTED', `server '${serverId}' runs without "${printable(name, 200)}" mapped from ${objects.map((o) => o.realpath).join(' or ')}, the file the warden resolved and judged for it: the loader took another one (planted in its search path after the warden looked?); the session was ended. Run 'mcp-warden status ${serverId}'.`);
  }
}
