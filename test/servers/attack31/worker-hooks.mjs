// Loader hooks of the attack31 env-roads server: initialize, on node's loader-hooks thread, puts the compile cache
// directory it is given into that thread's process.env and starts the package's greeting worker from there; what
// the worker posts goes to the port it is given. The hooks change nothing.
import { Worker } from 'node:worker_threads';

export function initialize({ dir, worker, port }) {
  process.env.NODE_COMPILE_CACHE = dir;
  const w = new Worker(new URL(worker));
  w.once('message', (m) => port.postMessage(m));
  w.once('error', (e) => port.postMessage(`worker failed: ${e.message}`));
}

export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier, context);
}
