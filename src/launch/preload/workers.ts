import workerThreads, { SHARE_ENV, type WorkerOptions } from 'node:worker_threads';
import type { Guard } from './guard.js';

// Worker threads: one started the ordinary way inherits --import and runs the preload again. One with code to
// eval would not: it is refused. One with an execArgv of its own gets the preload's --import first, and its
// execArgv may hold only what this process was started with and memory tuning: anything else (another --import
// or --require, an option that takes the preload's URL as its value) could run before the guard. So could
// --require in NODE_OPTIONS, which node reads from a worker's environment: it must be what this process had.
// The options are read once, into a copy the checks and node both see (a getter could answer each differently),
// and node's own Worker class is reachable from no property of the wrapper or of its instances.

const TUNING = /^--(max-old-space-size|max-semi-space-size|stack-size)=\d+$/;

type WorkerClass = typeof workerThreads.Worker;

export function guardWorkers(guard: Guard, preloadUrl: string): void {
  const ownExecArgv = new Set(process.execArgv); // as this process started, before any server code
  const ownNodeOptions = process.env.NODE_OPTIONS;
  const NodeWorker: WorkerClass = workerThreads.Worker;

  const checked = (options: WorkerOptions | undefined): WorkerOptions | undefined => {
    if (options === undefined || options === null) {
      if (process.env.NODE_OPTIONS !== ownNodeOptions) guard.refuse('a worker thread with a NODE_OPTIONS this process was not started with', ', which could run code before the module guard');
      return options;
    }
    const copy: WorkerOptions = { ...options };
    if (copy.eval) guard.refuse('a worker thread from code to eval', ', which would run without the module guard; give the worker a file of the attested set');
    if (copy.execArgv !== undefined) {
      const argv = Array.from(copy.execArgv as ArrayLike<unknown>, (a) => String(a));
      const other = argv.find((a) => !ownExecArgv.has(a) && !TUNING.test(a));
      if (other !== undefined) guard.refuse(`a worker thread with the option ${JSON.stringify(other.slice(0, 64))}`, ', which could run code before the module guard; leave execArgv out or pass process.execArgv');
      copy.execArgv = ['--import', preloadUrl, ...argv];
    }
    if (copy.env !== undefined && copy.env !== SHARE_ENV) copy.env = { ...(copy.env as NodeJS.Dict<string>) };
    const env = copy.env === undefined || copy.env === SHARE_ENV ? process.env : (copy.env as NodeJS.Dict<string>);
    const nodeOptions = env.NODE_OPTIONS === undefined ? undefined : String(env.NODE_OPTIONS);
    if (nodeOptions !== ownNodeOptions) guard.refuse(`a worker thread with NODE_OPTIONS ${JSON.stringify(String(nodeOptions).slice(0, 64))}`, ', which could run code before the module guard; leave NODE_OPTIONS out of its env');
    return copy;
  };

  function GuardedWorker(this: unknown, filename: string | URL, options?: WorkerOptions): object {
    if (new.target === undefined) throw new TypeError("Class constructor Worker cannot be invoked without 'new'");
    return Reflect.construct(NodeWorker, [filename, checked(options)], new.target) as object;
  }
  GuardedWorker.prototype = NodeWorker.prototype;
  Object.setPrototypeOf(GuardedWorker, Object.getPrototypeOf(NodeWorker) as object);
  Object.defineProperty(NodeWorker.prototype, 'constructor', { value: GuardedWorker, writable: true, enumerable: false, configurable: true });
  (workerThreads as { Worker: unknown }).Worker = GuardedWorker;
}
