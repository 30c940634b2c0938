// Loader hooks of the attack32 env-data server: initialize, on node's loader-hooks thread, writes a learn-mode
// attested set into that thread's worker environment data (setEnvironmentData) and starts the package's
// lib/load-worker.mjs from there with workerData `path`; what the worker posts, or how it ended, goes to `port`.
// The hooks change nothing.
import { Worker, setEnvironmentData } from 'node:worker_threads';

export function initialize({ worker, path, port }) {
  setEnvironmentData('mcp-warden.attested-set', { magic: 'mcp-warden-attested-set', server: 'loader', mode: 'learn', files: [], keys: [], reportFd: 99 });
  const w = new Worker(new URL(worker), { workerData: path });
  w.once('message', (m) => port.postMessage(`worker imported ${m}`));
  w.once('error', (e) => port.postMessage(`worker failed: ${e.message}`));
  w.once('exit', (c) => port.postMessage(`worker exit ${c}`));
}

export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier, context);
}
