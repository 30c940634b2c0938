// A worker of the attack31 env-roads server: puts the compile cache directory its workerData names into its own
// process.env, starts the package's greeting worker itself, and posts what that one posted.
import { Worker, parentPort, workerData } from 'node:worker_threads';

process.env.NODE_COMPILE_CACHE = workerData;
const w = new Worker(new URL('./greeting-worker.mjs', import.meta.url));
w.once('message', (m) => parentPort.postMessage(m));
w.once('error', (e) => parentPort.postMessage(`inner worker failed: ${e.message}`));
