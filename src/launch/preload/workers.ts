import crypto from 'node:crypto';
import workerThreads, { type WorkerOptions } from 'node:worker_threads';
import { COMPILE_CACHE_VARIABLE, compileCacheInStore, threadEnvironment } from './environment.js';
import type { Guard } from './guard.js';

// Read from node's modules once, when the guard is loaded: a named import of a built-in is a live binding, which
// module.syncBuiltinESMExports() (a public API) points at whatever the server put on the module since.
const { SHARE_ENV, getEnvironmentData, setEnvironmentData } = workerThreads;
const { randomBytes } = crypto;
const construct = Reflect.construct;

// A worker's attested set: the thread that starts it puts a copy of its own in its environment data (node clones
// a thread's environment data into each worker it starts) under a key made for that worker alone, random, and
// removes it once the worker is made; the key reaches the worker as the last of its process.argv, which its
// preload takes away before any of the worker's code runs. Nothing of the server can name the key while the
// copy is there, so nothing can put another set under it (a fixed key could be written with setEnvironmentData,
// a public API, on any thread, node's loader-hooks thread included).
const HANDED_SET_PREFIX = 'mcp-warden-attested-set=';

/** In a worker thread, before any of its code: the set the thread that started it handed down, taken out of the
 *  worker's process.argv and environment data; undefined when there is none. */
export function handedDownSet(): unknown {
  const argv = process.argv;
  const last = argv[argv.length - 1];
  if (typeof last !== 'string' || !last.startsWith(HANDED_SET_PREFIX)) return undefined;
  argv.pop();
  const key = last;
  const state = getEnvironmentData(key);
  setEnvironmentData(key, undefined);
  return state;
}

/** The option the warden gives node to turn require(esm) off (src/launch/node-release.ts; the preload imports
 *  node built-ins and its own files only). */
const REQUIRE_ESM_OFF = '--no-experimental-require-module';

// Worker threads: one started the ordinary way inherits --import and runs the preload again. One with code to
// eval would not: it is refused. One with an execArgv of its own gets the preload's --import first, and its
// execArgv may hold only what this process was started with and memory tuning: anything else (another --import
// or --require, an option that takes the preload's URL as its value) could run before the guard. So could
// --require in NODE_OPTIONS, which node reads from a worker's environment: it and node's other loader variables
// must be what this process had. node reads them from the environment it makes the worker from: the env option's
// copy, else this thread's store (environment.ts), not whatever object process.env names now. A worker made from
// the store (no env option, or SHARE_ENV) is admitted only while the store holds no NODE_COMPILE_CACHE, which
// node would enable the worker's compile cache from before the preload runs there (environment.ts keeps it out).
// The options are read once, into a copy the checks and node both see (a getter could answer each differently),
// and node's own Worker class is reachable from no property of the wrapper or of its instances.

const TUNING = /^--(max-old-space-size|max-semi-space-size|stack-size)=\d+$/;
/** What node reads from a worker's environment to change what it loads or runs (as store/servers.ts refuses). */
const LOADER_VARIABLES = ['NODE_OPTIONS', 'NODE_COMPILE_CACHE', 'NODE_PATH', 'NODE_PRESERVE_SYMLINKS', 'NODE_REPL_EXTERNAL_MODULE'];

type WorkerClass = typeof workerThreads.Worker;

export function guardWorkers(current: () => Guard, preloadUrl: string): void {
  const guard = { refuse: (what: string, why: string): never => current().refuse(what, why) };
  const ownExecArgv = new Set(process.execArgv); // as this process started, before any server code
  // require(esm) off where the warden turned it off (docs/adr/0049-require-esm-on-node-20.md): kept so in a worker
  // given an execArgv of its own, which would otherwise start with node's default.
  const keptOff = ownExecArgv.has(REQUIRE_ESM_OFF) ? [REQUIRE_ESM_OFF] : [];
  const store = threadEnvironment();
  const own = new Map(LOADER_VARIABLES.map((name) => [name, store[name]]));
  const NodeWorker: WorkerClass = workerThreads.Worker;

  /** The worker's environment holds node's loader variables as this process started with them. */
  const sameLoaderVariables = (env: NodeJS.Dict<string>): void => {
    for (const [name, value] of own) {
      const theirs = env[name] === undefined ? undefined : String(env[name]);
      if (theirs !== value) guard.refuse(`a worker thread with ${name}=${JSON.stringify(String(theirs).slice(0, 64))} in its environment`, `, which could make node run code the module guard does not see; leave ${name} out of the worker's env`);
    }
  };

  /** A worker made from this thread's store: node reads NODE_COMPILE_CACHE there when it makes the thread. */
  const noCompileCacheInStore = (): void => {
    const value = compileCacheInStore();
    if (value !== undefined) guard.refuse(`a worker thread with ${COMPILE_CACHE_VARIABLE}=${JSON.stringify(String(value).slice(0, 64))} in its environment`, `, which would make node take the worker's code from that cache instead of the files the module guard checks; leave ${COMPILE_CACHE_VARIABLE} out of the environment`);
  };

  const checked = (options: WorkerOptions | undefined): WorkerOptions | undefined => {
    if (options === undefined || options === null) {
      noCompileCacheInStore();
      return options; // node reads no NODE_OPTIONS for such a worker
    }
    const copy: WorkerOptions = { ...options };
    if (copy.eval) guard.refuse('a worker thread from code to eval', ', which would run without the module guard; give the worker a file of the attested set');
    if (copy.execArgv !== undefined) {
      const argv = Array.from(copy.execArgv as ArrayLike<unknown>, (a) => String(a));
      const other = argv.find((a) => !ownExecArgv.has(a) && !TUNING.test(a));
      if (other !== undefined) guard.refuse(`a worker thread with the option ${JSON.stringify(other.slice(0, 64))}`, ', which could run code before the module guard; leave execArgv out or pass process.execArgv');
      copy.execArgv = ['--import', preloadUrl, ...keptOff, ...argv];
    }
    if (copy.env !== undefined && copy.env !== SHARE_ENV) copy.env = { ...(copy.env as NodeJS.Dict<string>) };
    else noCompileCacheInStore();
    // node reads the loader variables for a worker given an env or an execArgv of its own (the store's when it
    // has no env); a worker with neither starts with this process's options, whatever the store says now.
    if (copy.env !== undefined || copy.execArgv !== undefined) sameLoaderVariables(copy.env === undefined || copy.env === SHARE_ENV ? store : (copy.env as NodeJS.Dict<string>));
    return copy;
  };

  function GuardedWorker(this: unknown, filename: string | URL, options?: WorkerOptions): object {
    if (new.target === undefined) throw new TypeError("Class constructor Worker cannot be invoked without 'new'");
    const copy: WorkerOptions = checked(options) ?? {};
    const key = HANDED_SET_PREFIX + randomBytes(24).toString('hex');
    if (copy.argv === undefined) copy.argv = [key];
    else if (Array.isArray(copy.argv)) copy.argv = [...copy.argv.map((a) => String(a)), key];
    // (any other argv: node refuses it, and a worker without the key refuses to run)
    setEnvironmentData(key, current().handDown());
    try {
      return construct(NodeWorker, [filename, copy], new.target) as object;
    } finally {
      setEnvironmentData(key, undefined);
    }
  }
  GuardedWorker.prototype = NodeWorker.prototype;
  Object.setPrototypeOf(GuardedWorker, Object.getPrototypeOf(NodeWorker) as object);
  Object.defineProperty(NodeWorker.prototype, 'constructor', { value: GuardedWorker, writable: true, enumerable: false, configurable: true });
  (workerThreads as { Worker: unknown }).Worker = GuardedWorker;
}
