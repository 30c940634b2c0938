import fs, { type BigIntStats, type Dirent } from 'node:fs';

// The three calls a tree walk and the re-check after launch make, in callback form, done two ways: at once on
// this thread (`syncIo`), or on libuv's thread pool with a bound on how many are in flight (`poolIo`). One walk
// written against `Io` runs either way, so the synchronous and the parallel digest cannot drift apart.
// Callback functions, not fs.promises: on node 20 a promise-returning lstat costs this thread about three times
// what the callback one does, which is most of what moving the call to the pool saves
// (docs/adr/0019-parallel-tree-walk.md).

export type Done<T> = (err: Error | null, value?: T) => void;

export interface Io {
  lstat(p: string, cb: Done<BigIntStats>): void;
  readdir(p: string, cb: Done<Dirent[]>): void;
  readlink(p: string, cb: Done<string>): void;
}

/** Calls `cb` with what `f` returned or threw; an exception thrown by `cb` itself is not caught. */
function now<T>(f: () => T, cb: Done<T>): void {
  let value: T;
  try {
    value = f();
  } catch (err) {
    cb(err as Error);
    return;
  }
  cb(null, value);
}

export const syncIo: Io = {
  lstat: (p, cb) => now(() => fs.lstatSync(p, { bigint: true }), cb),
  readdir: (p, cb) => now(() => fs.readdirSync(p, { withFileTypes: true }), cb),
  readlink: (p, cb) => now(() => fs.readlinkSync(p), cb),
};

/** In flight at once. More than libuv's pool has threads, so that each finds the next call queued; past ~32 this
 *  thread's bookkeeping grows and nothing is gained (measured, ADR 0019). */
export const POOL_CONCURRENCY = 32;

/** Io on the thread pool, at most `limit` calls in flight (the rest wait here, in the order they were asked). */
export function poolIo(limit = POOL_CONCURRENCY): Io {
  let active = 0;
  const waiting: Array<() => void> = [];
  const run = <T>(start: (cb: Done<T>) => void, cb: Done<T>): void => {
    const go = (): void => {
      active++;
      start((err, value) => {
        active--;
        const next = waiting.shift();
        if (next) next();
        cb(err, value);
      });
    };
    if (active < limit) go();
    else waiting.push(go);
  };
  return {
    lstat: (p, cb) => run((done) => fs.lstat(p, { bigint: true }, done as Done<fs.BigIntStats>), cb),
    readdir: (p, cb) => run((done) => fs.readdir(p, { withFileTypes: true }, done as Done<Dirent[]>), cb),
    readlink: (p, cb) => run((done) => fs.readlink(p, done as Done<string>), cb),
  };
}
