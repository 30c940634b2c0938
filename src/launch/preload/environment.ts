import fs from 'node:fs';
import Module from 'node:module';
import util from 'node:util';

// node 22.1+ enables a thread's compile cache from NODE_COMPILE_CACHE in the environment it makes the thread from,
// before any JavaScript runs there, the module guard's preload included (node's LoadEnvironment): a planted cache
// entry of the right size and checksum would then run in place of an attested file, or of the preload itself. That
// environment is a store of node's, not the object process.env names: a worker with no env option gets a copy of
// the creating thread's store made when it is constructed, one with SHARE_ENV the store itself, read when its
// thread starts; node's loader-hooks thread a copy made when module.register starts it. So the variable is kept
// out of every store a server's thread has, from the start: the warden starts the server without it (launch/env.ts,
// store/servers.ts), a worker given an env object of its own without it is refused (workers.ts), and every way
// a thread's JavaScript writes its store goes through here: process.env (node's set and define interceptors) and
// process.loadEnvFile (node's own parse, written without going through process.env). Installed in every thread
// that runs server code, before any does (loaders.ts): the main thread, worker threads, node's loader-hooks thread.

/** The variable node enables a thread's compile cache from (node 22.1+). */
export const COMPILE_CACHE_VARIABLE = 'NODE_COMPILE_CACHE';

/** Whether this node has a compile cache at all (node 22.1+; on node 20 the variable means nothing). */
const hasCompileCache = typeof (Module as unknown as { enableCompileCache?: unknown }).enableCompileCache === 'function';

/** This thread's environment store as node made it: what process.env named when the guard was loaded, before any
 *  server code ran. A server may point process.env at another object; node makes threads from this one. */
const store: NodeJS.ProcessEnv = process.env;

/** Taken before any server code runs, like the guard's other fs functions. */
const { readFileSync, writeSync } = fs;
// Read from node's modules once, when the guard is loaded: a named import of a built-in is a live binding, which
// module.syncBuiltinESMExports() (a public API) points at whatever the server put on the module since.
const { parseEnv } = util;

/** The thread's environment store as node reads it to make a thread (workers.ts checks what a worker gets). */
export function threadEnvironment(): NodeJS.ProcessEnv {
  return store;
}

/** The compile cache directory a thread made from this thread's store now would get: undefined where this node
 *  has no compile cache. */
export function compileCacheInStore(): string | undefined {
  return hasCompileCache ? store[COMPILE_CACHE_VARIABLE] : undefined;
}

/** Whether a name written to the store is the variable as node reads it: the process environment's store (the main
 *  thread's, shared with SHARE_ENV workers) hands the name to setenv(3), which reads it up to its first NUL. */
function isCompileCacheName(name: string | symbol): boolean {
  return typeof name === 'string' && name.split('\0', 1)[0] === COMPILE_CACHE_VARIABLE;
}

/** A write of the variable is dropped, as module.enableCompileCache answers FAILED (loaders.ts): the server runs
 *  on, compiling from source. Said once per thread on stderr, best-effort. */
let told = false;
function dropped(): true {
  if (!told) {
    told = true;
    try {
      writeSync(2, `mcp-warden: the module guard keeps node's compile cache off: ${COMPILE_CACHE_VARIABLE} is not put in the server's environment (a thread started from it would take code from that cache, not from the files the guard checks).\n`);
    } catch {
      // no stderr: nothing to say it on
    }
  }
  return true;
}

export function keepCompileCacheOutOfEnvironment(): void {
  if (!hasCompileCache) return;
  const guarded = new Proxy(store, {
    set(target, key, value): boolean {
      return isCompileCacheName(key) ? dropped() : Reflect.set(target, key, value);
    },
    defineProperty(target, key, descriptor): boolean {
      return isCompileCacheName(key) ? dropped() : Reflect.defineProperty(target, key, descriptor);
    },
  });
  Object.defineProperty(process, 'env', { value: guarded, writable: true, enumerable: true, configurable: true });

  // node's loadEnvFile writes the store itself. The file is read once and parsed by node's own parser (the one
  // loadEnvFile uses); as node does, a variable the environment already holds is left as it is.
  if (typeof process.loadEnvFile === 'function') {
    process.loadEnvFile = function guardedLoadEnvFile(path?: string | URL | Buffer): void {
      const parsed = parseEnv(readFileSync(path ?? '.env', 'utf8'));
      for (const [name, value] of Object.entries(parsed)) {
        if (isCompileCacheName(name)) dropped();
        else if (!(name in store)) store[name] = value;
      }
    };
  }
}
