// A worker of the attack31 env-roads server: enables node's compile cache in its own thread with
// module.enableCompileCache(workerData), then imports the package's innocent module and posts its greeting and
// whether the cache was enabled.
import Module from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

const r = Module.enableCompileCache(workerData);
const { greeting } = await import('./innocent.mjs');
parentPort.postMessage(`${greeting} (cache ${r.status === Module.constants.compileCacheStatus.FAILED ? 'failed' : 'enabled'})`);
