// A worker of the attack31 env-roads server: once its parent says so, posts `NAME=value` for the environment
// variable its workerData names.
import { parentPort, workerData } from 'node:worker_threads';

parentPort.once('message', () => parentPort.postMessage(`${workerData}=${process.env[workerData]}`));
