// A worker thread that only says it started.
import { parentPort } from 'node:worker_threads';
parentPort.postMessage('worker started');
