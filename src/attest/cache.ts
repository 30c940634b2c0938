import type { StatKey } from './stat-key.js';

// The digest cache, keyed by (dev, ino, size, mtime_ns, ctime_ns). A hit skips reading the file; any change
// to the file changes its ctime, which user space cannot set back. One entry per inode: a newer version of
// the same inode replaces the older. Persisted by store/digest-cache-file.ts.

const MAX_ENTRIES = 200_000;

/** Whether every character of `s` from `start` is 0-9 or a-f (what /^[0-9a-f]+$/ tests on the slice, without the
 *  slice and the regular expression: a warm walk asks once per file, docs/adr/0056-launch-on-node-24.md). */
function lowerHexFrom(s: string, start: number): boolean {
  for (let i = start; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

export type CacheEntries = Record<string, string>;

function inodeOf(k: StatKey): string {
  return `${k.dev}:${k.ino}`;
}

function versionOf(k: StatKey, sha256: string): string {
  return `${k.size}:${k.mtimeNs}:${k.ctimeNs}:${sha256}`;
}

export class DigestCache {
  private readonly entries: Map<string, string>;
  dirty = false;
  hits = 0;
  misses = 0;

  constructor(entries: CacheEntries = {}) {
    this.entries = new Map(Object.entries(entries));
  }

  get(k: StatKey): string | undefined {
    const v = this.entries.get(inodeOf(k));
    const prefix = `${k.size}:${k.mtimeNs}:${k.ctimeNs}:`;
    if (v !== undefined && v.length === prefix.length + 64 && v.startsWith(prefix) && lowerHexFrom(v, prefix.length)) {
      this.hits++;
      return v.slice(prefix.length);
    }
    this.misses++;
    return undefined;
  }

  set(k: StatKey, sha256: string): void {
    const inode = inodeOf(k);
    const v = versionOf(k, sha256);
    if (this.entries.get(inode) === v) return;
    if (this.entries.size >= MAX_ENTRIES && !this.entries.has(inode)) this.entries.clear();
    this.entries.set(inode, v);
    this.dirty = true;
  }

  toJSON(): CacheEntries {
    return Object.fromEntries(this.entries);
  }

  /** Forgets every entry once the cache was saved and nothing more is digested with it: a session that lives for
   *  hours would otherwise keep a map of every file of its package tree (~1 MB for 4,400 files,
   *  docs/adr/0069-run-memory-on-node-24.md). */
  forget(): void {
    this.entries.clear();
    this.dirty = false;
  }
}
