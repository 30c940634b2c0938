import type { StatKey } from './stat-key.js';

// The digest cache, keyed by (dev, ino, size, mtime_ns, ctime_ns). A hit skips reading the file; any change
// to the file changes its ctime, which user space cannot set back. One entry per inode: a newer version of
// the same inode replaces the older. Persisted by store/digest-cache-file.ts.

const MAX_ENTRIES = 200_000;
const HEX64 = /^[0-9a-f]{64}$/;

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
    if (v !== undefined && v.startsWith(prefix) && v.length === prefix.length + 64 && HEX64.test(v.slice(prefix.length))) {
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
}
