// A worker of the attack31 worker-cache server: imports the package's innocent module and posts its greeting.
import { parentPort } from 'node:worker_threads';

const { greeting } = await import('./innocent.mjs');
parentPort.postMessage(greeting);
