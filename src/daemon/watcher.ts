import fs from 'node:fs';
import path from 'node:path';
import { FSWatcher } from 'chokidar';

// Watching files for change the way that works (FACTS.md, chokidar 5): a watcher on a single file goes deaf
// after an unlink + recreate (what install(1) does) and never sees `ln -sfn`; watching the parent directory
// (depth 0) and filtering by name sees write, rename-over, unlink + recreate, cp, mv and ln -sfn in ~1.4 ms.
// A package tree is watched directory by directory with fs.watch (one inotify watch each, any entry counts):
// chokidar took 1.1 s and +50 MB RSS for the 718 directories of the three reference servers' trees, fs.watch
// 7 ms and +0.2 MB (docs/adr/0010-watching-package-trees.md). A directory replaced as a whole (its watch goes
// deaf) raises an event in its parent, which is watched too; the re-check that follows re-targets. Events for
// the same key are coalesced over `debounceMs` (an `npm install` into a tree is one re-check, not thousands).

export interface WatchTarget {
  /** Absolute path whose changes matter (the file need not exist: a new file there matters too). */
  path: string;
  /** Passed back on change, e.g. the server ids that depend on this path. */
  keys: string[];
  /** Watch the entries directly inside `path` (a directory) instead of `path` itself. */
  contents?: boolean;
}

export class ParentDirWatcher {
  private watcher: FSWatcher | undefined;
  private byPath = new Map<string, Set<string>>();
  private byDir = new Map<string, Set<string>>();
  private readonly dirWatches = new Map<string, { watch: fs.FSWatcher; ino: number }>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly ready: Promise<void>;
  private resolveReady!: () => void;

  constructor(
    private readonly onChange: (key: string, changedPath: string) => void,
    private readonly debounceMs = 50,
  ) {
    this.ready = new Promise((r) => (this.resolveReady = r));
  }

  /** Replaces the set of watched paths; resolves once the watcher is ready. */
  async set(targets: WatchTarget[]): Promise<void> {
    this.byPath = new Map();
    this.byDir = new Map();
    for (const t of targets) {
      const map = t.contents ? this.byDir : this.byPath;
      const keys = map.get(t.path) ?? new Set<string>();
      for (const k of t.keys) keys.add(k);
      map.set(t.path, keys);
    }
    this.setDirWatches();
    const dirs = [...new Set([...this.byPath.keys()].map((p) => path.dirname(p)))].sort();
    if (!this.watcher) {
      this.watcher = new FSWatcher({ depth: 0, ignoreInitial: true, followSymlinks: false, alwaysStat: false });
      for (const ev of ['add', 'change', 'unlink', 'addDir', 'unlinkDir'] as const) this.watcher.on(ev, (p: string) => this.event(p));
      this.watcher.on('ready', () => this.resolveReady());
      this.watcher.on('error', () => {});
      this.watcher.add(dirs);
      await this.ready;
      return;
    }
    const wanted = new Set([...dirs, ...dirs.map((d) => path.dirname(d))]);
    const stale = Object.keys(this.watcher.getWatched()).filter((d) => !wanted.has(d));
    if (stale.length > 0) this.watcher.unwatch(stale);
    this.watcher.add(dirs);
  }

  /** Watches each directory of byDir that exists; drops the others, and any whose directory was replaced. */
  private setDirWatches(): void {
    for (const [dir, w] of this.dirWatches) {
      if (this.byDir.has(dir) && inodeOf(dir) === w.ino) continue;
      w.watch.close();
      this.dirWatches.delete(dir);
    }
    for (const dir of this.byDir.keys()) {
      if (this.dirWatches.has(dir)) continue;
      const ino = inodeOf(dir);
      if (ino === undefined) continue; // gone already: the event that said so re-checks its server
      try {
        const watch = fs.watch(dir, { persistent: true }, (_type, name) => this.event(path.join(dir, name ? name.toString() : '.')));
        watch.on('error', () => this.event(path.join(dir, '.')));
        this.dirWatches.set(dir, { watch, ino });
      } catch {
        // Unreadable or vanished in between: as above.
      }
    }
  }

  /** How many directories are watched (one inotify watch each). */
  get directories(): number {
    const chokidarDirs = this.watcher ? Object.keys(this.watcher.getWatched()).filter((d) => !this.dirWatches.has(d)).length : 0;
    return chokidarDirs + this.dirWatches.size;
  }

  private event(p: string): void {
    const abs = path.resolve(p);
    const keys = new Set([...(this.byPath.get(abs) ?? []), ...(this.byDir.get(path.dirname(abs)) ?? [])]);
    for (const key of keys) {
      clearTimeout(this.pending.get(key));
      this.pending.set(
        key,
        setTimeout(() => {
          this.pending.delete(key);
          this.onChange(key, p);
        }, this.debounceMs),
      );
    }
  }

  async close(): Promise<void> {
    for (const t of this.pending.values()) clearTimeout(t);
    for (const w of this.dirWatches.values()) w.watch.close();
    this.dirWatches.clear();
    await this.watcher?.close();
  }
}

function inodeOf(dir: string): number | undefined {
  try {
    const st = fs.lstatSync(dir);
    return st.isDirectory() ? st.ino : undefined;
  } catch {
    return undefined;
  }
}
