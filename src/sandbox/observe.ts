import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sameInode, statKey, type StatKey } from '../attest/stat-key.js';
import { findTool, type Engine } from './engine.js';
import type { ObserveContext } from './observe-context.js';
import { real } from './plan.js';

// Watching what an enrollment launch writes, without changing what it can do (docs/adr/0063-observed-enrollment.md).
// The launch runs in a mount namespace of its own (util-linux unshare) where each writable place (the user's
// home, /tmp, /var/tmp, the warden's home, the working directory) is an overlayfs mount over itself, its upper
// directory in a scratch directory of the warden's home. The server reads everything as before and its writes
// succeed, but they land in the upper directories: once the launch ended, those list exactly what it wrote
// (and deleted), and none of it reached the real files. bubblewrap 0.8 has no overlay option (0.9 added it), so
// a fixed sh script of the trusted path mounts them and execs the server: the same pid, process group and fds.
//
// overlayfs shows every file read through it on a device of its own: the server's code (its executable, its
// script's package and the node_modules above it, the package store, the module guard) is bound back real over
// an overlay that holds it, or the exec'd-inode check and the module guard's stat keys would no longer match; a
// place holding code that cannot be bound back so (a script at the home's top) is reported as not observed.

/** Entries listed per launch; a launch that wrote more is reported as truncated. */
export const MAX_WRITES = 256;
const MAX_DEPTH = 24;
/** How long the helpers (unshare, sh) may take to exec the server. */
const START_MS = 10_000;

/** The fds the script holds the kept directories on (3 and 4 are the module guard's; dash redirects one digit). */
export const MAX_KEPT = 5;

/** Opens each kept directory on fd 5.. (before any overlay hides it), mounts each overlaid directory as an overlay
 *  over itself, binds each kept directory back (its real one, not the overlay's), then execs what follows `--`.
 *  All or none: a failure unmounts what was made and is written to $s/failed; the server runs either way.
 *  Positional: scratch, extra overlay options, mount, umount, count overlaid, count kept, overlaid..., kept..., --. */
const SCRIPT = [
  's=$1; x=$2; M=$3; U=$4; n=$5; k=$6; shift 6; failed=""; err=""; done=""',
  'j=0; while [ "$j" -lt "$k" ]; do eval "d=\\${$((n+j+1))}"; eval "exec $((5+j))<\"\$d\"" || failed=$d; j=$((j+1)); done',
  'i=0; while [ -z "$failed" ] && [ "$i" -lt "$n" ]; do',
  '  eval "d=\\${$((i+1))}"',
  '  if err=$("$M" -n -t overlay overlay -o "lowerdir=$d,upperdir=$s/u$i,workdir=$s/w$i$x" "$d" 2>&1); then done="$d $done"; else failed=$d; fi',
  '  i=$((i+1))',
  'done',
  'j=0; while [ -z "$failed" ] && [ "$j" -lt "$k" ]; do',
  '  eval "d=\\${$((n+j+1))}"',
  '  err=$("$M" -n -c --bind "/proc/self/fd/$((5+j))" "$d" 2>&1) || failed=$d',
  '  j=$((j+1))',
  'done',
  'j=0; while [ "$j" -lt "$k" ]; do eval "exec $((5+j))<&-"; j=$((j+1)); done',
  'if [ -n "$failed" ]; then',
  '  for m in $done; do "$U" -n -l "$m"; done',
  '  printf "%s" "$failed" > "$s/failed"; printf "%s" "$err" > "$s/mount-error"',
  'fi',
  'shift $((n+k+1))',
  'exec "$@"',
].join('\n');

export interface ObservedWrite {
  path: string;
  kind: 'write' | 'delete';
}

/** What the observed launches of one enrollment wrote, and what could not be observed (and why). */
export interface Observed {
  dirs: string[];
  /** The server's code as the launches named it (never granted to write). */
  code: string[];
  /** Directories its configuration names (env values, arguments, cwd): its writes there are real, not watched. */
  kept: string[];
  notObserved: { dir: string; why: string }[];
  writes: ObservedWrite[];
  truncated: boolean;
  /** Why no launch was observed, when none was. */
  unavailable?: string;
}

export function newObserved(): Observed {
  return { dirs: [], code: [], kept: [], notObserved: [], writes: [], truncated: false };
}

/** One observed launch: the command that runs the server under the overlays, and how to read them after. */
export interface ObservedLaunch {
  command: { file: string; args: string[]; argv0: string };
  /** unshare's stat key: the pid runs it, then the sh script, then the server. */
  helpers: StatKey[];
  /** After the launch ended: what it wrote, added to the enrollment's record; the scratch directory removed. */
  finish(): void;
}

const inside = (p: string, dir: string): boolean => p === dir || p.startsWith(dir.endsWith('/') ? dir : dir + '/');

/** The realpath of `p` when it is an absolute path naming a directory, else undefined. */
export function realDir(p: string | undefined): string | undefined {
  if (p === undefined || !path.isAbsolute(p)) return undefined;
  try {
    const r = fs.realpathSync(p);
    return fs.statSync(r).isDirectory() ? r : undefined;
  } catch {
    return undefined;
  }
}

const unfit = (d: string): string | undefined =>
  d === '/' ? 'the root is never overlaid whole' : /[,:\\\s]/.test(d) ? "its path holds a character overlayfs options cannot carry (',', ':', '\\' or a space)" : undefined;

/** The directory a configured path names: itself, or the directory of a file (made or not yet). */
function namedDir(p: string): string | undefined {
  if (!path.isAbsolute(p) || p.length > 4096) return undefined;
  const d = realDir(p) ?? realDir(path.dirname(p));
  return d !== undefined && unfit(d) === undefined ? d : undefined;
}

/** The places an observed launch overlays, those it binds back inside them (named by the configuration: the
 *  server's writes there are real, as the operator said), and those it leaves alone with the reason. */
export function observedDirs(ctx: ObserveContext): { dirs: string[]; kept: string[]; notObserved: { dir: string; why: string }[] } {
  const code = ctx.code.map(real);
  const roots = ctx.codeRoots.map(real);
  const rootOf = (c: string): string | undefined => roots.find((r) => inside(c, r));
  const named = [...new Set(ctx.named.filter((n) => !code.includes(real(n))).map(namedDir).filter((d): d is string => d !== undefined))];
  const candidates = [...new Set([ctx.userHome, '/tmp', '/var/tmp', ctx.wardenHome, ctx.cwd].map(realDir).filter((d): d is string => d !== undefined))];
  const notObserved: { dir: string; why: string }[] = [];
  let kept: string[] = [];
  for (const d of candidates) {
    // Code inside it is bound back when it lies in a root strictly inside it; other code keeps it unwatched.
    const holds = code.find((c) => inside(c, d) && !(rootOf(c) !== undefined && rootOf(c) !== d && inside(rootOf(c) as string, d)));
    const by = named.find((n) => inside(d, n));
    const why = unfit(d) ?? (holds !== undefined ? `it holds the server's code (${holds}), whose inodes must stay the ones attested` : by !== undefined ? `the server's configuration names ${by}` : undefined);
    if (why !== undefined) notObserved.push({ dir: d, why });
    else kept.push(d);
  }
  let dirs = kept.filter((d) => !kept.some((o) => o !== d && inside(d, o)));
  const bound = [...named, ...code.map(rootOf).filter((r): r is string => r !== undefined)];
  const within = [...new Set(bound)].filter((n) => dirs.some((d) => inside(n, d) && n !== d)).sort();
  kept = within.filter((n) => !within.some((o) => o !== n && inside(n, o)));
  for (const extra of kept.slice(MAX_KEPT)) {
    const d = dirs.find((o) => inside(extra, o)) as string;
    notObserved.push({ dir: d, why: `more than ${MAX_KEPT} places to keep real (the server's code, or named by its configuration) lie inside it` });
    dirs = dirs.filter((o) => o !== d);
  }
  kept = kept.filter((n) => dirs.some((d) => inside(n, d))).slice(0, MAX_KEPT);
  // The one holding the warden's home (where the upper directories are) is mounted last: an upper directory
  // must be reached on the host's side, not through another overlay.
  const home = realDir(ctx.wardenHome) ?? ctx.wardenHome;
  const last = (d: string): number => (inside(home, d) ? 1 : 0);
  dirs.sort((a, b) => last(a) - last(b) || (a < b ? -1 : 1));
  return { dirs, kept, notObserved };
}

/** Prepares one observed launch of `file args`, or says why it cannot be observed. */
export function observeLaunch(ctx: ObserveContext, file: string, args: string[], into: Observed): ObservedLaunch | undefined {
  const tools = ['unshare', 'sh', 'mount', 'umount'].map((n) => [n, findTool(n, ctx.lookup)] as const);
  const missing = tools.filter(([, t]) => t === undefined).map(([n]) => n);
  if (missing.length > 0) return void (into.unavailable ??= `${missing.join(', ')} (util-linux, a shell) not found as root- or warden-owned files on the trusted path ${ctx.trustedPath}`);
  const [unshare, sh, mount, umount] = tools.map(([, t]) => t as Engine) as [Engine, Engine, Engine, Engine];
  const { dirs, kept, notObserved } = observedDirs(ctx);
  for (const k of kept) if (!into.kept.includes(k)) into.kept.push(k);
  for (const c of ctx.code) if (!into.code.includes(c)) into.code.push(c);
  for (const n of notObserved) if (!into.notObserved.some((o) => o.dir === n.dir)) into.notObserved.push(n);
  if (dirs.length === 0) return void (into.unavailable ??= `no writable place could be watched (${notObserved.map((n) => `${n.dir}: ${n.why}`).join('; ')})`);
  const base = path.join(ctx.wardenHome, 'observe');
  const scratch = path.join(base, randomBytes(8).toString('hex'));
  try {
    fs.mkdirSync(base, { recursive: true, mode: 0o700 });
    fs.mkdirSync(scratch, { mode: 0o700 });
    dirs.forEach((_, i) => (fs.mkdirSync(path.join(scratch, `u${i}`)), fs.mkdirSync(path.join(scratch, `w${i}`))));
  } catch (err) {
    fs.rmSync(scratch, { recursive: true, force: true });
    return void (into.unavailable ??= `its scratch directory ${scratch} could not be made (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const root = process.getuid?.() === 0;
  // Unprivileged, the mount namespace needs a user namespace; the server is mapped to root in it (no capability
  // outside it), and overlayfs keeps its metadata in user.* attributes there.
  const ns = root ? ['--mount', '--propagation', 'private'] : ['--user', '--map-root-user', '--mount', '--propagation', 'private'];
  const argv = [...ns, '--', sh.file, '-c', SCRIPT, 'sh', scratch, root ? '' : ',userxattr', mount.file, umount.file, String(dirs.length), String(kept.length), ...dirs, ...kept, '--', file, ...args];
  for (const d of dirs) if (!into.dirs.includes(d)) into.dirs.push(d);
  let finished = false;
  return {
    command: { file: unshare.file, args: argv, argv0: unshare.file },
    helpers: [unshare.key],
    finish: () => {
      if (finished) return;
      finished = true;
      try {
        const failed = readSmall(path.join(scratch, 'failed'));
        if (failed !== undefined) {
          into.unavailable ??= `overlayfs could not be mounted over ${failed}: ${readSmall(path.join(scratch, 'mount-error'))?.trim() || 'no reason given'}`;
          return;
        }
        dirs.forEach((d, i) => collect(path.join(scratch, `u${i}`), d, into, 0));
      } finally {
        fs.rmSync(scratch, { recursive: true, force: true });
        try {
          fs.rmdirSync(base); // when no other launch is observed meanwhile
        } catch {
          // not empty: another enrollment's launch
        }
      }
    },
  };
}

function readSmall(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').slice(0, 1024);
  } catch {
    return undefined;
  }
}

/** Adds what the upper directory `upper` of the overlay over `lower` holds: files written, and whiteouts (a
 *  character device 0/0) for what was deleted. A directory made is listed only when it is empty. */
function collect(upper: string, lower: string, into: Observed, depth: number): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(upper, { withFileTypes: true });
  } catch {
    return;
  }
  const add = (w: ObservedWrite): void => {
    if (into.writes.some((o) => o.path === w.path && o.kind === w.kind)) return;
    if (into.writes.length >= MAX_WRITES) into.truncated = true;
    else into.writes.push(w);
  };
  if (entries.length === 0 && depth > 0) add({ path: lower, kind: 'write' });
  for (const e of entries) {
    const p = path.join(lower, e.name);
    const u = path.join(upper, e.name);
    if (e.isCharacterDevice() && fs.lstatSync(u).rdev === 0) add({ path: p, kind: 'delete' });
    else if (e.isDirectory() && depth < MAX_DEPTH) collect(u, p, into, depth + 1);
    else add({ path: p, kind: 'write' });
  }
}

/** What `pid` runs: a helper (unshare, or the script: told by its command line, as a server may run the same
 *  shell), the server (its command line is the one the script exec'd), or not known yet. */
function stateOf(pid: number, helpers: StatKey[], argv: readonly string[]): 'helper' | 'server' | 'unknown' | 'unreadable' {
  try {
    const exe = statKey(fs.statSync(`/proc/${pid}/exe`, { bigint: true }));
    if (helpers.some((h) => sameInode(exe, h))) return 'helper';
    const seen = fs.readFileSync(`/proc/${pid}/cmdline`).toString('utf8').split('\0').slice(0, -1);
    // In an exec, the new image is mapped before its arguments are: no command line yet (seen under load: sh taken
    // for "something else" twice in a row, and the enrollment refused as handing off to /usr/bin/dash).
    if (seen.length === 0) return 'unreadable';
    if (seen[1] === '-c' && seen[2] === SCRIPT) return 'helper';
    return seen.length === argv.length && seen.every((a, i) => a === argv[i]) ? 'server' : 'unknown';
  } catch {
    return 'unreadable'; // in the middle of an exec, or gone
  }
}

/** Waits until the helpers exec'd the server (the same pid: unshare and sh exec, never fork it): its command line
 *  is the server's, or a helper was seen and something else ran on two polls in a row (a server that changed its
 *  command line at once). At the deadline, or once it exited, the exec'd-inode check that follows says what ran. */
export async function observedServer(pid: number, helpers: StatKey[], argv: readonly string[], alive: () => boolean): Promise<void> {
  const deadline = Date.now() + START_MS;
  let seenHelper = false;
  let other = 0;
  for (;;) {
    const state = stateOf(pid, helpers, argv);
    other = state === 'unknown' && seenHelper ? other + 1 : 0;
    if (state === 'server' || other >= 2) return;
    if (state === 'helper') seenHelper = true;
    if (!alive() || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 2));
  }
}
