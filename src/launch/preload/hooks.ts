import fs from 'node:fs';
import Module from 'node:module';
import workerThreads, { type MessagePort } from 'node:worker_threads';
import { EXIT_REFUSED, createGuard, endProcess, isGuardState, type Guard, type GuardState } from './guard.js';
import { guardLoaders } from './loaders.js';
import { guardWorkers } from './workers.js';

// Loader hooks (module.register), run on node's loader-hooks thread: every ES module (and every CommonJS module
// reached through import) is checked by URL before its source is loaded. Registered by the preload before any
// server code, first on that thread: on node 20 for every ES module, on node 22.15+ when the server registers
// hooks of its own (preload.ts). The preload never runs on this thread, so what else could load code here
// (require, process.dlopen from a server's own hooks) is guarded here too.

interface InitData {
  /** Where the preload posts the attested set, once the warden has released it. */
  port: MessagePort;
  /** Registered from a worker thread: process.exit would end only that worker. */
  inWorker: boolean;
  /** The preload's URL, for the --import of worker threads started on this thread. */
  preloadUrl: string;
}

// Read from node's modules once, when the hooks are loaded: a named import of a built-in is a live binding, which
// module.syncBuiltinESMExports() (a public API) points at whatever the server put on the module since.
const { syncBuiltinESMExports } = Module;
const { receiveMessageOnPort } = workerThreads;

let guard: Guard | undefined;
let port: MessagePort | undefined;
let arrived: (g: Guard) => void = () => undefined;
const ready = new Promise<Guard>((resolve) => (arrived = resolve));
let inWorker = false;

// Taken before any hooks of the server's own are loaded on this thread.
const exit = process.exit.bind(process);

/** Ends the server: node ends the process when this thread exits; if an 'exit' listener the server's own hooks
 *  put on this thread throws instead (or this thread was started from a worker), the process is killed. */
function end(): never {
  return endProcess(inWorker ? undefined : () => exit(EXIT_REFUSED));
}

function take(state: unknown): Guard {
  if (guard) return guard;
  if (!isGuardState(state)) {
    try {
      fs.writeSync(2, "mcp-warden: the module guard's loader thread did not get the warden's attested set; the server is ended.\n");
    } catch {
      // no stderr: the exit status says it
    }
    return end();
  }
  guard = createGuard(state, end);
  port?.close();
  arrived(guard);
  return guard;
}

/** The guard, now: a load on this thread before the set was posted finds it waiting on the port, or is refused. */
function current(): Guard {
  if (guard) return guard;
  const message = port ? receiveMessageOnPort(port) : undefined;
  return take(message?.message as GuardState | undefined);
}

export function initialize(data: InitData): void {
  inWorker = data.inWorker;
  port = data.port;
  port.once('message', (state: GuardState) => take(state));
  // No in-thread hook runs on this thread on any node: every check the main thread has, and workers' too.
  guardLoaders(current, { extensions: true });
  guardWorkers(current, data.preloadUrl);
  syncBuiltinESMExports(); // named imports of node:worker_threads and node:module on this thread see the checks
}

type NextLoad = (url: string, context: unknown) => Promise<unknown>;

export async function load(url: string, context: unknown, nextLoad: NextLoad): Promise<unknown> {
  if (!port) throw new Error('mcp-warden: module guard hooks were not initialized');
  (guard ?? (await ready)).url(url);
  return nextLoad(url, context);
}
