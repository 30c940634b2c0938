// A worker of the attack31 worker-cache server: imports the file its workerData names and posts its description.
import { parentPort, workerData } from 'node:worker_threads';

const { description } = await import(workerData);
parentPort.postMessage(String(description));
