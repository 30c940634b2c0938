import fs from 'node:fs';
import path from 'node:path';

// Watching files for change the way that works on Linux: a watch on a file itself goes deaf after an unlink +
// recreate (what install(1) does) and never sees `ln -sfn`; a watch on its directory sees write, rename-over,
// unlink + recreate, cp, mv and ln -sfn, by name (FACTS.md). So every watch here is on a directory (fs.watch,
// one inotify watch each): the parent of each watched file, and each directory of a package tree, where any
// entry counts. chokidar did the same for files but took 1.1 s and +50 MB RSS for the 718 directories of the
// reference servers' trees (fs.watch: 7 ms, +0.2 MB), and seemed to lose events while re-adding watched
// directories (docs/adr/0010-watching-directories.md).
//
// A directory that does not exist yet is covered by watching its nearest existing ancestor; a directory
// replaced as a whole is noticed in its parent. Either way the owner re-checks and calls set() again, which
// re-targets. Events for the same key are coalesced into one re-check at most `debounceMs` after the first of them.

export interface WatchTarget {
  /** Absolute path whose changes matter (the file need not exist: a new file there matters too). */
  path: string;
  /** Passed back on change, e.g. the server ids that depend on this path. */
  keys: string[];
  /** Watch the entries directly inside `path` (a directory) instead of `path` itself. */
  contents?: boolean;
}

interface DirWatch {
  watch: fs.FSWatcher;
  ino: number;
}

export class ParentDirWatcher {
  /** Exact paths -> keys. */
  private byPath = new Map<string, Set<string>>();
  /** Directories where any entry counts -> keys. */
  private byDir = new Map<string, Set<string>>();
  private readonly watches = new Map<string, DirWatch>();
  /** Keys with a re-check due, and the last path changed since the first event. */
  private readonly pending = new Map<string, { timer: NodeJS.Timeout; changed: string }>();

  constructor(
    private readonly onChange: (key: string, changedPath: string) => void,
    private readonly debounceMs = 50,
    private readonly warn: (m: string) => void = () => {},
  ) {}

  /** Replaces the set of watched paths. */
  async set(targets: WatchTarget[]): Promise<void> {
    const byPath = new Map<string, Set<string>>();
    const byDir = new Map<string, Set<string>>();
    const add = (map: Map<string, Set<string>>, p: string, keys: string[]): void => {
      const set = map.get(p) ?? new Set<string>();
      for (const k of keys) set.add(k);
      map.set(p, set);
    };
    for (const t of targets) {
      const dir = t.contents ? t.path : path.dirname(t.path);
      const existing = nearestDirectory(dir);
      if (existing === dir) add(t.contents ? byDir : byPath, t.path, t.keys);
      else if (existing) add(byDir, existing, t.keys); // not there yet: any change in the closest ancestor re-checks
      // A directory reached through a symlink (/bin on merged-/usr systems) is watched where it points, and
      // the symlink itself in its parent, so re-pointing it is seen too.
      if (existing && isSymlink(existing) && nearestDirectory(path.dirname(existing)) === path.dirname(existing)) add(byPath, existing, t.keys);
    }
    this.byPath = byPath;
    this.byDir = byDir;
    const dirs = new Set([...byDir.keys(), ...[...byPath.keys()].map((p) => path.dirname(p))]);
    for (const [dir, w] of this.watches) {
      if (dirs.has(dir) && inodeOf(dir) === w.ino) continue;
      w.watch.close();
      this.watches.delete(dir);
    }
    const failed: string[] = [];
    for (const dir of dirs) if (!this.watches.has(dir)) this.watchDir(dir, failed);
    if (failed.length > 0) {
      this.warn(`cannot watch ${failed.length} director${failed.length === 1 ? 'y' : 'ies'} (first: ${failed[0]}); changes there are caught only by the scheduled verification. If the reason is ENOSPC, raise fs.inotify.max_user_watches.`);
    }
  }

  /** How many directories are watched (one inotify watch each). */
  get directories(): number {
    return this.watches.size;
  }

  private watchDir(dir: string, failed: string[]): void {
    const ino = inodeOf(dir);
    if (ino === undefined) return;
    try {
      const watch = fs.watch(dir, { persistent: true }, (_type, name) => this.event(dir, name ? name.toString() : undefined));
      // The directory went away or the watch broke: everything that depends on it re-checks.
      watch.on('error', () => this.event(dir, undefined));
      this.watches.set(dir, { watch, ino });
    } catch (err) {
      // Vanished in between: the event that removed it re-checks whoever depends on it. Anything else is said.
      if (inodeOf(dir) !== undefined) failed.push(`${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }

  private event(dir: string, name: string | undefined): void {
    const keys = new Set(this.byDir.get(dir) ?? []);
    if (name === undefined) {
      // No name (queue overflow, broken watch): every file watched in this directory may have changed.
      for (const [p, ks] of this.byPath) if (path.dirname(p) === dir) for (const k of ks) keys.add(k);
    } else {
      for (const k of this.byPath.get(path.join(dir, name)) ?? []) keys.add(k);
    }
    const changed = name === undefined ? dir : path.join(dir, name);
    for (const key of keys) {
      // A window opens on the first event of a key and is never extended: a process writing without pause cannot
      // delay the re-check past debounceMs (review 15, finding 4). The last path changed in it is reported.
      const open = this.pending.get(key);
      if (open !== undefined) {
        open.changed = changed;
        continue;
      }
      const fire = (): void => {
        const last = this.pending.get(key)?.changed ?? changed;
        this.pending.delete(key);
        this.onChange(key, last);
      };
      this.pending.set(key, { timer: setTimeout(fire, this.debounceMs), changed });
    }
  }

  async close(): Promise<void> {
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    for (const w of this.watches.values()) w.watch.close();
    this.watches.clear();
  }
}

/** The inode of the directory `dir` names (through a symlink, as inotify watches it), if it is one. */
function inodeOf(dir: string): number | undefined {
  try {
    const st = fs.statSync(dir);
    return st.isDirectory() ? st.ino : undefined;
  } catch {
    return undefined;
  }
}

/** `dir` when it is a directory, else its nearest ancestor that is one. */
function nearestDirectory(dir: string): string | undefined {
  for (let d = dir; ; d = path.dirname(d)) {
    if (inodeOf(d) !== undefined) return d;
    if (path.dirname(d) === d) return undefined;
  }
}

function isSymlink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}
