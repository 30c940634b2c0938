import { createHash } from 'node:crypto';
import type { BigIntStats, Dirent } from 'node:fs';
import type { DigestCache } from './cache.js';
import { digestFile, type FileDigest } from './digest.js';
import type { Done, Io } from './fs-io.js';
import { keyString, statKey } from './stat-key.js';

// One package directory of the tree digest, in two steps. `Walk` lists it: the lstat and readdir of every
// directory, the readlink of every symlink and the digest of every file, issued through an `Io` (the calls may
// complete in any order; each result lands in its own slot, and an error is kept there, not thrown). `replay`
// then goes through the listing in the order a one-call-at-a-time walk makes (depth first, readdir order) and
// produces the same lines, stat keys and directories in the same order, throwing the first error met in that
// order: what the digest and its errors are does not depend on the order in which the calls completed.

type Entry =
  | { name: string; t: 'l'; target?: string; err?: unknown }
  | { name: string; t: 'd'; dir: Listing }
  | { name: string; t: 'f'; digest?: FileDigest; err?: unknown }
  | { name: string; t: 'o' };

export interface Listing {
  key?: string;
  keyErr?: unknown;
  entries?: Entry[];
  listErr?: unknown;
}

/** `path.join(dir, name)` for a normalized absolute `dir` and a name from readdir (no "/", never "." or ".."). */
export const join = (dir: string, name: string): string => (dir === '/' ? `/${name}` : `${dir}/${name}`);

export class Walk {
  /** Entries listed so far (each package's own top-level node_modules left out), the tree's file budget. */
  entries = 0;
  /** More than `max` entries were listed: nothing more is asked for. */
  over = false;
  private pending = 0;
  private settle: (() => void) | undefined;

  constructor(
    private readonly io: Io,
    private readonly cache: DigestCache | undefined,
    private readonly max: number,
  ) {}

  /** Starts listing a directory (`top`: a package directory, whose node_modules/ is left out). */
  dir(abs: string, top: boolean): Listing {
    const d: Listing = {};
    this.call(this.io.lstat, abs, (err, st) => {
      if (err) d.keyErr = err;
      else d.key = keyString(statKey(st as BigIntStats));
    });
    this.call(this.io.readdir, abs, (err, list) => {
      if (err) {
        d.listErr = err;
        return;
      }
      const entries: Entry[] = (d.entries = []);
      for (const e of list as Dirent[]) {
        if (top && e.name === 'node_modules') continue;
        if (++this.entries > this.max) {
          this.over = true;
          return;
        }
        entries.push(this.entry(join(abs, e.name), e));
      }
    });
    return d;
  }

  /** Resolves once every call asked for has completed (at once when there is none left). */
  idle(): Promise<void> {
    return this.pending === 0 ? Promise.resolve() : new Promise((resolve) => (this.settle = resolve));
  }

  private entry(abs: string, e: Dirent): Entry {
    const name = e.name;
    if (e.isSymbolicLink()) {
      const link: Extract<Entry, { t: 'l' }> = { name, t: 'l' };
      this.call(this.io.readlink, abs, (err, target) => {
        if (err) link.err = err;
        else link.target = target as string;
      });
      return link;
    }
    if (e.isDirectory()) return { name, t: 'd', dir: this.dir(abs, false) };
    if (!e.isFile()) return { name, t: 'o' };
    const file: Extract<Entry, { t: 'f' }> = { name, t: 'f' };
    const cache = this.cache;
    if (!cache) this.digest(file, () => digestFile(abs));
    else {
      // digestFile's warm path with the lstat on the pool: a regular file whose stat key is in the cache is not
      // read. Anything else is digestFile's to decide, as it would have been.
      this.call(this.io.lstat, abs, (err, st) => {
        const key = !err && (st as BigIntStats).isFile() ? statKey(st as BigIntStats) : undefined;
        const cached = key && cache.get(key);
        if (key && cached) file.digest = { sha256: cached, key, executable: ((st as BigIntStats).mode & 0o100n) !== 0n };
        else if (key) {
          this.digest(file, () => {
            const d = digestFile(abs);
            cache.set(d.key, d.sha256);
            return d;
          });
        } else this.digest(file, () => digestFile(abs, cache));
      });
    }
    return file;
  }

  private digest(file: Extract<Entry, { t: 'f' }>, f: () => FileDigest): void {
    try {
      file.digest = f();
    } catch (err) {
      file.err = err;
    }
  }

  private call<T>(f: (p: string, cb: Done<T>) => void, p: string, then: (err: Error | null, value?: T) => void): void {
    if (this.over) return;
    this.pending++;
    f(p, (err, value) => {
      try {
        if (!this.over) then(err, value);
      } finally {
        if (--this.pending === 0) this.settle?.();
      }
    });
  }
}

/**
 * Goes through a complete listing of the package at `pkgDir` depth first in readdir order, adding the stat key of
 * every directory and file to `keys` and every directory to `dirs` as it goes; returns the package digest. Throws
 * the first error in that order.
 */
export function replay(pkgDir: string, listing: Listing, keys: Map<string, string>, dirs: string[]): string {
  const lines: Array<[sortKey: string, line: string]> = [];
  const add = (line: string): void => void lines.push([line.slice(2), line]);
  const visit = (d: Listing, abs: string, rel: string): void => {
    if (d.keyErr !== undefined) throw d.keyErr;
    keys.set(abs, d.key as string);
    dirs.push(abs);
    if (d.listErr !== undefined) throw d.listErr;
    for (const e of d.entries as Entry[]) {
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      const childAbs = join(abs, e.name);
      if (e.t === 'l') {
        if (e.err !== undefined) throw e.err;
        add(`l\0${childRel}\0${e.target as string}`);
      } else if (e.t === 'd') {
        add(`d\0${childRel}`);
        visit(e.dir, childAbs, childRel);
      } else if (e.t === 'f') {
        if (e.err !== undefined) throw e.err;
        const digest = e.digest as FileDigest;
        keys.set(childAbs, keyString(digest.key));
        add(`f\0${childRel}\0${digest.executable ? 'x' : '-'}\0${digest.sha256}`);
      } else add(`o\0${childRel}`);
    }
  };
  visit(listing, pkgDir, '');
  // Sorted on what follows the type letter, the relative path first (each path occurs once in a package).
  lines.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return createHash('sha256').update(lines.map((l) => l[1]).join('\n')).digest('hex');
}
