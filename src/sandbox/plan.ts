import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WardenError } from '../error.js';
import { sandboxGrantProblem, type GrantScope } from './grant-policy.js';
import { denyChains, denyLayout, linksOnTheWay, mountDepth, type DenyLayout, type DenyMount, type DenyScope } from './deny-plan.js';
import type { Confinement } from './schema.js';

// A confinement as bubblewrap's arguments. Order matters: bwrap applies them in turn, a later mount covering
// an earlier one. So: the whole system read-only; then hidden (the homes, the warden's home, /run) under empty
// tmpfs; then the grants (write read-write, read.allow read-only, the data directory) and the hiding of what
// read.deny names (sandbox/deny-plan.ts), in order of depth; last, the server's own attested files read-only again on top of everything, so no grant can make
// them writable, even for root (who keeps no capability inside: --cap-drop ALL). The empty tmpfs are made
// read-only last (after the grants inside them have their mount points). A grant is bound from the file
// descriptor it was checked through (--bind-fd), never by its name again: bubblewrap compares what it mounted
// with that descriptor, so a grant swapped after the check fails the launch instead of binding something else.

export interface PlanContext {
  id: string;
  /** The user's home (HOME of the warden). */
  userHome: string;
  /** The warden's home (its stores, locks, sockets, audit log). */
  wardenHome: string;
  /** <home>/data/<id>, created by the warden. */
  dataDir: string;
  /** The attested files and trees of this launch, and the module guard's directory. */
  ownFiles: string[];
  /** What the warden itself runs: its install (code and dependencies), its node, the engine. Never writable. */
  wardenFiles: string[];
  /** The server's working directory, if configured. */
  cwd: string | undefined;
  /** The trusted path and every server's sandbox: what no grant may reach (sandbox/grant-policy.ts). */
  scope: GrantScope;
  /** The binds of the session's decoys in the hidden home (sandbox/decoys.ts), made before it is read-only. */
  decoyArgs?: readonly string[];
}

/** bwrap's arguments, and the descriptors of the grants they bind: the child's fds from `base` on, in order. */
export interface SandboxMounts {
  fds: number[];
  args(base: number): string[];
  close(): void;
}

// O_PATH (not in node's constants): a descriptor that names the object without opening it for reading.
const O_PATH = 0o10000000;

const inside = (p: string, dir: string): boolean => p === dir || p.startsWith(dir.endsWith('/') ? dir : dir + '/');
const overlaps = (a: string, b: string): boolean => inside(a, b) || inside(b, a);

function refuse(id: string, what: string): never {
  throw new WardenError('SANDBOX_UNAVAILABLE', `the sandbox of server '${id}' cannot be applied: ${what}. Change it with: mcp-warden sandbox ${id} (see docs/guide.md, "Confining a server"). The server was not launched.`);
}

/** The kind of what is at `p` (following links), or undefined when nothing is. */
function kindOf(p: string): 'dir' | 'file' | undefined {
  try {
    return fs.statSync(p).isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

/** The realpath of `p`, or `p` when nothing is there. */
export function real(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/** The grant `p` opened without following a link anywhere on its way (O_PATH, O_NOFOLLOW; the kernel's name of
 *  the descriptor must be `p` itself), a directory or a regular file; undefined when nothing is there. The
 *  caller closes it. */
function openGrant(p: string, id: string, fds: number[]): number | undefined {
  let fd: number;
  try {
    fd = fs.openSync(p, O_PATH | fs.constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    refuse(id, `the grant ${p} cannot be opened (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  fds.push(fd);
  const st = fs.fstatSync(fd);
  if (st.isSymbolicLink() || fs.readlinkSync(`/proc/self/fd/${fd}`) !== p) refuse(id, `the grant ${p} is or lies under a symbolic link (to ${real(p)}); name the real path`);
  if (!st.isDirectory() && !st.isFile()) refuse(id, `the grant ${p} is neither a directory nor a regular file`);
  return fd;
}

/** Judges the grants against the warden's home, the server's own files and what no grant may reach, and opens
 *  each (refuses with SANDBOX_UNAVAILABLE, the descriptors closed). */
function checkGrants(c: Confinement, ctx: PlanContext, fds: number[]): Map<string, number> {
  const opened = new Map<string, number>();
  for (const p of [...c.write, ...c.read.allow]) {
    const fd = openGrant(p, ctx.id, fds);
    if (fd !== undefined) opened.set(p, fd);
  }
  for (const p of c.write) {
    const own = ctx.ownFiles.find((f) => overlaps(p, f));
    if (own !== undefined) refuse(ctx.id, `the write grant ${p} overlaps the server's own attested ${own}, which stays read-only`);
    const warden = ctx.wardenFiles.find((f) => overlaps(p, f));
    if (warden !== undefined) refuse(ctx.id, `the write grant ${p} overlaps the warden's own ${warden} (what the warden runs: its code and dependencies, its node, the engine), which no server may change`);
    if (!opened.has(p)) refuse(ctx.id, `the write grant ${p} does not exist (create it first: the warden creates only the data directory)`);
  }
  const problem = sandboxGrantProblem(c, ctx.scope);
  if (problem !== undefined) refuse(ctx.id, problem);
  return opened;
}

/** bwrap's arguments up to (not including) `--` and the server's command, and the grants' descriptors. */
export function bwrapArgs(c: Confinement, ctx: PlanContext): SandboxMounts {
  const fds: number[] = [];
  const close = (): void => {
    for (const fd of fds.splice(0)) fs.closeSync(fd);
  };
  let opened: Map<string, number>;
  try {
    opened = checkGrants(c, ctx, fds);
  } catch (err) {
    close();
    throw err;
  }
  const a: string[] = ['--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--cap-drop', 'ALL'];
  if (c.network !== 'any') a.push('--unshare-net');
  // Unprivileged, bwrap makes a user namespace; with --dev it would nest a second one, and the warden (its owner)
  // could not join the first, which owns the network namespace its proxy listens in (sandbox/egress.ts). Mapping
  // the server to uid 0 there (still without a capability) keeps one.
  if (typeof c.network === 'object' && process.getuid?.() !== 0) a.push('--unshare-user', '--uid', '0', '--gid', '0');
  a.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');
  const hidden = hiddenDirs(ctx.userHome, ctx.wardenHome);
  for (const p of hidden) a.push('--tmpfs', p);
  // resolv.conf often points into /run (systemd-resolved): kept readable for a server with the network.
  if (c.network === 'any') {
    try {
      const resolv = fs.realpathSync('/etc/resolv.conf');
      if (inside(resolv, '/run')) a.push('--ro-bind', resolv, resolv);
    } catch {
      // no resolver configuration: nothing to keep
    }
  }
  // The grants (write read-write, then read.allow read-only, each from its descriptor), the data directory, and
  // the hiding of read.deny (sandbox/deny-plan.ts), in order of depth: a directory is mounted before what lies in
  // it, a grant before a rebuilt directory at its own path.
  let deny: DenyLayout;
  try {
    deny = denyLayout(c.read.deny, denyScope(c, ctx.dataDir, hidden), fds, (what) => refuse(ctx.id, what));
  } catch (err) {
    close();
    throw err;
  }
  const grants: Mount[] = [
    ...c.write.map((p) => ({ path: p, args: ['--bind-fd', opened.get(p) as number, p] })),
    ...c.read.allow.filter((p) => opened.has(p)).map((p) => ({ path: p, args: ['--ro-bind-fd', opened.get(p) as number, p] })),
    { path: ctx.dataDir, args: ['--bind', ctx.dataDir, ctx.dataDir] },
  ];
  const hiding: Mount[] = deny.mounts.map((m) => ({ path: m.path, args: denyArgs(m) }));
  const middle = [...grants.map((m) => ({ ...m, rank: 0 })), ...hiding.map((m) => ({ ...m, rank: 1 }))]
    .map((m, i) => ({ ...m, i }))
    .sort((x, y) => mountDepth(x.path) - mountDepth(y.path) || x.rank - y.rank || x.i - y.i);
  const after: string[] = [];
  for (const p of [...new Set(ctx.ownFiles)]) if (kindOf(p) !== undefined) after.push('--ro-bind', p, p);
  after.push(...(ctx.decoyArgs ?? []));
  // The empty tmpfs (a hidden directory, one rebuilt, a denied directory's stand-in) are made read-only once
  // everything inside them is mounted (a server installed in the store has its files under the warden's home): a
  // write there would not reach the host, but "writes only where granted" is meant literally.
  for (const p of [...hidden, ...deny.readOnly]) after.push('--remount-ro', p);
  after.push('--chdir', ctx.cwd ?? ctx.dataDir, '--setenv', 'TMPDIR', '/tmp');
  // A descriptor is the child's fd base + its index in `order`: the descriptors in the order they are mounted.
  const order = middle.flatMap((m) => m.args.filter((x): x is number => typeof x === 'number'));
  return {
    fds: order,
    args: (base) => {
      let n = 0;
      return [...a, ...middle.flatMap((m) => m.args.map((x) => (typeof x === 'number' ? String(base + n++) : x))), ...after];
    },
    close,
  };
}

/** One bwrap option of the grants or the hiding: strings, and host descriptors (numbered in the child later). */
interface Mount {
  path: string;
  args: (string | number)[];
}

function denyArgs(m: DenyMount): (string | number)[] {
  switch (m.op) {
    case 'tmpfs':
      return ['--tmpfs', m.path];
    case 'null':
      return ['--ro-bind', '/dev/null', m.path];
    case 'symlink':
      return ['--symlink', m.target, m.path];
    default:
      return [`--${m.op}`, m.fd, m.path];
  }
}

/** What bubblewrap mounts before the hiding of read.deny: the empty tmpfs, the grants, the data directory. */
function denyScope(c: Confinement, dataDir: string, hidden: string[]): DenyScope {
  return { hidden: [...hidden, '/tmp'].map(real), writable: [...c.write, dataDir].map(real), readable: c.read.allow.map(real) };
}

/** The directories bubblewrap hides under an empty tmpfs: the homes, /run, the user's and the warden's home. */
function hiddenDirs(userHome: string, wardenHome: string): string[] {
  return [...new Set(['/home', '/root', '/run', userHome, wardenHome])].filter((p) => kindOf(p) === 'dir');
}

/** Why the read.deny paths of `c` cannot be hidden (a path also granted, a directory to rebuild too large), or
 *  undefined: judged when a sandbox is set and shown, as at launch. */
export function denyProblem(c: Confinement, ctx: Pick<PlanContext, 'userHome' | 'wardenHome' | 'dataDir'>): string | undefined {
  const fds: number[] = [];
  try {
    denyLayout(c.read.deny, denyScope(c, ctx.dataDir, hiddenDirs(ctx.userHome, ctx.wardenHome)), fds, (what) => {
      throw new WardenError('SANDBOX_UNAVAILABLE', what);
    });
    return undefined;
  } catch (err) {
    if (err instanceof WardenError) return err.message;
    throw err;
  } finally {
    for (const fd of fds) fs.closeSync(fd);
  }
}

/** The names the host could replace to move the hiding of `c`'s read.deny paths (sandbox/deny-plan.ts: the top
 *  directory rebuilt, when mounted on a name of the host's) and the links on the way to each deny path, which `run`
 *  watches with those above them; all of read.deny when it cannot be planned (the launch is refused then). */
export function exposedDenyNames(c: Confinement, ctx: Pick<PlanContext, 'userHome' | 'wardenHome' | 'dataDir'>): string[] {
  // The links on the way to each deny path too, by their own names: re-pointed, they move what the path names.
  const links = c.read.deny.flatMap(linksOnTheWay);
  try {
    return [...links, ...denyChains(c.read.deny, denyScope(c, ctx.dataDir, hiddenDirs(ctx.userHome, ctx.wardenHome)), (what) => {
      throw new Error(what);
    }).exposed];
  } catch {
    return [...links, ...c.read.deny];
  }
}

/** The user's home as a sandbox hides it: HOME when absolute, else the passwd entry's. */
export function sandboxUserHome(): string {
  return process.env.HOME && path.isAbsolute(process.env.HOME) ? path.resolve(process.env.HOME) : os.homedir();
}

/** A server's data directory, <home>/data/<id>. */
export const dataDirOf = (home: string, id: string): string => path.join(home, 'data', id);

/** Creates <home>/data/<id> (owner-only) if it is missing; refuses a data directory that is a link or not a directory. */
export function ensureDataDir(home: string, id: string): string {
  const data = path.join(home, 'data');
  const dir = path.join(data, id);
  for (const d of [data, dir]) {
    try {
      fs.mkdirSync(d, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') refuse(id, `its data directory ${d} cannot be created (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    const st = fs.lstatSync(d);
    if (!st.isDirectory()) refuse(id, `its data directory ${d} is not a directory (a link or a file is never followed there)`);
  }
  return dir;
}
