import fs from 'node:fs';
import path from 'node:path';
import { mountPoints } from './grant-policy.js';

// read.deny without a race (docs/adr/0050-sandbox-engine.md, addendum "read.deny without a race", issue 29). A
// mount over a denied name sits on the dentry the name had at launch, and the host replacing that name (a rename
// over it, an unlink and a new file) detaches it. So the name is never mounted over where the host can reach it:
// the directory holding it is rebuilt inside the sandbox, an empty tmpfs with every OTHER entry bound back from
// the descriptor it was checked through (as grants are), and the denied name, when it exists, gets an empty
// stand-in (/dev/null, or an empty directory) on that tmpfs. Each directory on the way up is rebuilt the same
// way up to the grant that shows the name (a name under the root bind only: its directory alone), or until one
// only the sandbox has (a directory bubblewrap made inside one of its own empty tmpfs: the homes, /tmp, /run,
// the warden's home). From there down to the denied name every dentry is the sandbox's own: what the host later
// puts at the name, or beside it, is not in the sandbox at all. When the top one rebuilt is mounted on a name of
// the host's (a grant outside the hidden places, /srv/notes; a directory under the root bind), that name and
// those above it are left `exposed`: renaming one moves the whole hiding, and `run` watches them.
// The price: an entry the host adds to a rebuilt directory after the launch is not seen by the server either,
// and the server cannot add one there (the tmpfs is read-only); a socket, fifo or device there is not shown.

/** Entries bound back, at most, over all the directories rebuilt for one sandbox: each is a mount bubblewrap makes
 *  at every launch, and their cost grows with the square of their number (bwrap reads the mount table for each;
 *  measured: 32 entries 10 ms of CPU, 128 45 ms, 256 134 ms, 1,000 1.5 s). 256 and not 128: /etc holds 137 entries
 *  on this host (150-250 on a desktop), and a root warden's server (uid 0, no capability) reads /etc/shadow unless
 *  it is denied. */
export const MAX_DENY_ENTRIES = 256;

/** What bubblewrap mounts before the read.deny paths are hidden (all realpaths). */
export interface DenyScope {
  /** Empty tmpfs directories: what lies inside one and inside no grant is a directory only the sandbox has. */
  hidden: string[];
  /** Bound read-write: write grants and the data directory. */
  writable: string[];
  /** Bound read-only: read.allow grants. */
  readable: string[];
}

/** One mount of the hiding, in bubblewrap's order; `fd` is the host descriptor the child gets. */
export type DenyMount =
  | { op: 'tmpfs' | 'null'; path: string }
  | { op: 'bind-fd' | 'ro-bind-fd'; path: string; fd: number }
  | { op: 'symlink'; path: string; target: string };

export interface DenyLayout {
  mounts: DenyMount[];
  /** The tmpfs made read-only once everything is mounted. */
  readOnly: string[];
  /** Names the host could still replace to undo a hiding (with the directories above them): the top directory
   *  rebuilt when its mount point is a name of the host's, or a denied name right under the root. `run` ends the
   *  session if one changes (sandbox/deny-watch.ts). */
  exposed: string[];
}

/** The directories to rebuild and the denied names, before anything is opened. */
export interface DenyChains {
  rebuild: string[];
  denied: Set<string>;
  /** Denied names right under the root (no directory to rebuild): hidden by a mount on the name itself, watched. */
  atRoot: string[];
  exposed: string[];
}

const O_PATH = 0o10000000;
const inside = (p: string, dir: string): boolean => p === dir || p.startsWith(dir.endsWith('/') ? dir : dir + '/');
const depth = (p: string): number => (p === '/' ? 0 : p.split('/').length - 1);

function lstatOf(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch {
    return undefined;
  }
}

/** The names the sandbox must not show for the deny path `p`: its nearest existing directory's realpath joined
 *  with the next name on the way to `p` (what is missing below is hidden with it), and, when `p` is a link, its
 *  target's realpath too. None when `p` lies under a file (it can never exist). */
export function deniedNames(p: string): string[] {
  let dir = path.dirname(path.resolve(p));
  let first = path.basename(path.resolve(p));
  while (lstatOf(dir) === undefined) [first, dir] = [path.basename(dir), path.dirname(dir)];
  let realDir: string;
  try {
    realDir = fs.realpathSync(dir);
    if (!fs.statSync(realDir).isDirectory()) return [];
  } catch {
    return [];
  }
  const named = path.join(realDir, first);
  const out = [named];
  if (lstatOf(named)?.isSymbolicLink()) {
    try {
      out.push(fs.realpathSync(named));
    } catch {
      // a dangling link: its name is hidden, nothing else is there
    }
  }
  return out;
}

/** The symbolic links met on the way to `p` as the kernel resolves it (each by the name it has once the links
 *  before it are followed; at most 40), for `run` to watch: the hiding is planned on realpaths, so a link the host
 *  re-points (a deploy's `current` -> releases/v2) would make the deny path name a file the sandbox shows
 *  (review 16, finding 1). Stops at the first missing name. */
export function linksOnTheWay(p: string): string[] {
  const out: string[] = [];
  let todo = path.resolve(p).split('/').filter(Boolean);
  let at = '/';
  while (todo.length > 0 && out.length <= 40) {
    const next = path.join(at, todo.shift() as string);
    const st = lstatOf(next);
    if (st === undefined) break;
    if (!st.isSymbolicLink()) {
      at = next;
      continue;
    }
    out.push(next);
    let target: string;
    try {
      target = fs.readlinkSync(next);
    } catch {
      break;
    }
    todo = [...target.split('/').filter(Boolean), ...todo];
    if (path.isAbsolute(target)) at = '/';
  }
  return out;
}

/** The deepest grant that is or holds `p`, with whether it is written. */
function grantOf(p: string, s: DenyScope): { root: string; write: boolean } | undefined {
  const all = [...s.writable.map((root) => ({ root, write: true })), ...s.readable.map((root) => ({ root, write: false }))];
  return all.filter((g) => inside(p, g.root)).sort((a, b) => b.root.length - a.root.length)[0];
}

/** Whether the sandbox's `dir` is its own (a directory bubblewrap made, empty but for mount points): inside one of
 *  its empty tmpfs and inside no grant (grants are mounted after those), or inside a denied directory's empty
 *  stand-in deeper than any grant holding it (the hiding is mounted in order of depth, a grant at its own). */
function own(dir: string, s: DenyScope, standIns: readonly string[]): boolean {
  const grant = grantOf(dir, s);
  if (grant === undefined && s.hidden.some((h) => inside(dir, h))) return true;
  return standIns.some((d) => inside(dir, d) && d.length > (grant?.root.length ?? 0));
}

/** The object at `p` (following links) as "dev:ino", or undefined. */
function keyOf(p: string): string | undefined {
  try {
    const st = fs.statSync(p, { bigint: true });
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

/** Why a denied name is shown under another name too: a mount point off its way that is, by device and inode,
 *  the name or a directory above it (a bind mount of its directory, /srv/alias of /srv/data). The root is bound
 *  whole into the sandbox, so the alias would show the file the hiding covers (review 16, finding 2). */
function aliasProblem(names: readonly string[], mounts: readonly string[]): string | undefined {
  if (names.length === 0) return undefined;
  const byKey = new Map<string, string[]>();
  for (const m of new Set(mounts)) {
    const k = keyOf(m);
    if (k !== undefined) byKey.set(k, [...(byKey.get(k) ?? []), m]);
  }
  for (const name of names) {
    for (let at = name; ; at = path.dirname(at)) {
      const k = keyOf(at);
      const alias = k === undefined ? undefined : byKey.get(k)?.find((m) => !inside(name, m));
      if (alias !== undefined) return `the read.deny path ${name} is shown under another name too: ${alias} is a mount of ${at} (a bind mount), and the sandbox shows every mount of the host, so ${path.join(alias, path.relative(at, name))} would read it; remove that mount, or keep the secret in a directory no other mount shows`;
      if (at === '/') break;
    }
  }
  return undefined;
}

/** Plans the hiding of `deny` (paths as configured) in the sandbox `s`; `refuse` says why it cannot be. */
export function denyChains(deny: readonly string[], s: DenyScope, refuse: (what: string) => never): DenyChains {
  const rebuild = new Set<string>();
  const denied = new Set<string>();
  const atRoot: string[] = [];
  const exposed = new Set<string>();
  const names = [...new Set(deny.flatMap(deniedNames))];
  for (const name of names) {
    const granted = [...s.writable, ...s.readable].find((g) => g === name);
    if (granted !== undefined) refuse(`the read.deny path ${name} is also granted (in write or read.allow); remove one of them`);
  }
  const alias = aliasProblem(names, mountPoints());
  if (alias !== undefined) refuse(alias);
  const standIns = names.filter((n) => lstatOf(n)?.isDirectory() === true);
  for (const name of names) {
    // Up to the grant that shows the name (its mount root), or the name's directory alone under the root bind.
    const grant = grantOf(name, s);
    let dir = path.dirname(name);
    const chain: string[] = [];
    while (dir !== '/' && !own(dir, s, standIns)) {
      chain.push(dir);
      if (grant === undefined || dir === grant.root) break;
      dir = path.dirname(dir);
    }
    const top = chain.at(-1);
    if (top === undefined && dir !== '/') continue; // only the sandbox's own directories lead there: not shown
    denied.add(name);
    for (const d of chain) rebuild.add(d);
    if (top === undefined) atRoot.push(name), exposed.add(name);
    else if (!own(path.dirname(top), s, standIns)) exposed.add(top); // its mount point is a name of the host's
  }
  return { rebuild: [...rebuild].sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : 1)), denied, atRoot, exposed: [...exposed] };
}

/** The entries of `dir` to bind back: all but the denied names, the directories rebuilt, and the grants (each
 *  mounted by its own grant). */
function others(dir: string, c: DenyChains, s: DenyScope): string[] {
  const grants = new Set([...s.writable, ...s.readable]);
  const out: string[] = [];
  // Read in turn and bounded: a directory of a million entries is refused without listing them all.
  const d = fs.opendirSync(dir);
  try {
    for (let e = d.readSync(); e !== null && out.length < LISTED; e = d.readSync()) {
      const p = path.join(dir, e.name);
      if (!c.denied.has(p) && !c.rebuild.includes(p) && !grants.has(p)) out.push(p);
    }
  } finally {
    d.closeSync();
  }
  return out.sort();
}

/** Entries of one rebuilt directory counted, at most: a refusal says "LISTED or more" beyond. */
const LISTED = 10_000;

/** Refuses a hiding that needs more than MAX_DENY_ENTRIES entries bound back, naming the largest directory. */
function checkBound(c: DenyChains, s: DenyScope, refuse: (what: string) => never): Map<string, string[]> {
  const entries = new Map<string, string[]>();
  for (const dir of c.rebuild) {
    try {
      entries.set(dir, others(dir, c, s));
    } catch (err) {
      refuse(`the directory ${dir}, rebuilt inside the sandbox to hide a read.deny path, cannot be listed (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  }
  const total = [...entries.values()].reduce((n, e) => n + e.length, 0);
  if (total > MAX_DENY_ENTRIES) {
    const [dir, list] = [...entries].sort((a, b) => b[1].length - a[1].length)[0] as [string, string[]];
    const more = total - list.length > 0 ? ` (and the other directories rebuilt ${total - list.length} more)` : '';
    refuse(`hiding its read.deny paths rebuilds ${dir} inside the sandbox, binding back every other entry at each launch, and ${dir} holds ${list.length}${list.length >= LISTED ? ' or more' : ''} other entries${more}, more than ${MAX_DENY_ENTRIES} (each is a mount: 256 cost ~0.13 s of CPU a launch). Deny a path in a smaller directory, or grant a subdirectory that does not hold it`);
  }
  return entries;
}

/** The entry `p` opened without following a link (O_PATH, O_NOFOLLOW; the kernel's name of the descriptor must be
 *  `p`): a bind from it, a link recreated, or nothing for a socket, fifo or device. */
function bindBack(p: string, write: boolean, fds: number[], refuse: (what: string) => never): DenyMount | undefined {
  let fd: number;
  try {
    fd = fs.openSync(p, O_PATH | fs.constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // gone since the listing: not shown
    refuse(`${p}, beside a read.deny path, cannot be opened (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  fds.push(fd);
  if (fs.readlinkSync(`/proc/self/fd/${fd}`) !== p) refuse(`the directory of ${p}, beside a read.deny path, was replaced while the sandbox was planned; launch again`);
  const st = fs.fstatSync(fd);
  if (st.isSymbolicLink()) return { op: 'symlink', path: p, target: fs.readlinkSync(p) };
  if (st.isDirectory() || st.isFile()) return { op: write ? 'bind-fd' : 'ro-bind-fd', path: p, fd };
  return undefined;
}

/** The mounts that hide `deny` in the sandbox `s`, the descriptors they bind pushed on `fds` (the caller closes
 *  them). Refuses through `refuse`. */
export function denyLayout(deny: readonly string[], s: DenyScope, fds: number[], refuse: (what: string) => never): DenyLayout {
  const c = denyChains(deny, s, refuse);
  const entries = checkBound(c, s, refuse);
  const mounts: DenyMount[] = [];
  const readOnly: string[] = [];
  const standIn = (name: string): void => {
    const st = lstatOf(name);
    if (st?.isDirectory()) mounts.push({ op: 'tmpfs', path: name }), readOnly.push(name);
    else if (st !== undefined && !st.isSymbolicLink()) mounts.push({ op: 'null', path: name });
  };
  for (const name of c.atRoot) standIn(name);
  for (const dir of c.rebuild) {
    mounts.push({ op: 'tmpfs', path: dir });
    readOnly.push(dir);
    const write = grantOf(dir, s)?.write === true;
    for (const p of entries.get(dir) ?? []) {
      const m = bindBack(p, write, fds, refuse);
      if (m !== undefined) mounts.push(m);
    }
    for (const name of c.denied) if (path.dirname(name) === dir) standIn(name);
  }
  return { mounts, readOnly, exposed: c.exposed };
}

/** The depth of a mount's path: bubblewrap must mount a directory before what lies in it. */
export const mountDepth = depth;
