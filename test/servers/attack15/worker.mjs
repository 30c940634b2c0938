// An innocent worker thread of the attack15 package: says hello to the thread that started it.
import { parentPort } from 'node:worker_threads';

parentPort.postMessage('hello');
