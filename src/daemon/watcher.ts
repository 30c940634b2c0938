import path from 'node:path';
import { FSWatcher } from 'chokidar';

// Watching files for change the way that works (FACTS.md, chokidar 5): a watcher on a single file goes deaf
// after an unlink + recreate (what install(1) does) and never sees `ln -sfn`; watching the parent directory
// (depth 0) and filtering by name sees write, rename-over, unlink + recreate, cp, mv and ln -sfn in ~1.4 ms.
// Events for the same key are coalesced over `debounceMs`.

export interface WatchTarget {
  /** Absolute path whose changes matter (the file need not exist: a new file there matters too). */
  path: string;
  /** Passed back on change, e.g. the server ids that depend on this path. */
  keys: string[];
}

export class ParentDirWatcher {
  private watcher: FSWatcher | undefined;
  private byPath = new Map<string, Set<string>>();
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
    for (const t of targets) {
      const keys = this.byPath.get(t.path) ?? new Set<string>();
      for (const k of t.keys) keys.add(k);
      this.byPath.set(t.path, keys);
    }
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
    const current = Object.keys(this.watcher.getWatched());
    const stale = current.filter((d) => !dirs.includes(d) && !dirs.some((x) => path.dirname(x) === d));
    if (stale.length > 0) this.watcher.unwatch(stale);
    this.watcher.add(dirs);
  }

  private event(p: string): void {
    const keys = this.byPath.get(path.resolve(p));
    if (!keys) return;
    for (const key of keys) {
      const id = `${key}\0${p}`;
      clearTimeout(this.pending.get(id));
      this.pending.set(
        id,
        setTimeout(() => {
          this.pending.delete(id);
          this.onChange(key, p);
        }, this.debounceMs),
      );
    }
  }

  async close(): Promise<void> {
    for (const t of this.pending.values()) clearTimeout(t);
    await this.watcher?.close();
  }
}
