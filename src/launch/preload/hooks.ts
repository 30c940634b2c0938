import type { MessagePort } from 'node:worker_threads';
import { EXIT_REFUSED, createGuard, type Guard, type GuardState } from './guard.js';

// Loader hooks (module.register), run on node's loader thread: every ES module (and every CommonJS module
// reached through import) is checked by URL before its source is loaded.

interface InitData {
  /** Where the preload posts the attested set, once the warden has released it. */
  port: MessagePort;
  /** Registered from a worker thread: process.exit would end only that worker. */
  inWorker: boolean;
}

let guard: Promise<Guard> | undefined;

export function initialize(data: InitData): void {
  guard = new Promise((resolve) => {
    data.port.once('message', (state: GuardState) => {
      data.port.close();
      resolve(
        createGuard(state, () => {
          if (data.inWorker) process.kill(process.pid, 'SIGKILL');
          process.exit(EXIT_REFUSED);
        }),
      );
    });
  });
}

type NextLoad = (url: string, context: unknown) => Promise<unknown>;

export async function load(url: string, context: unknown, nextLoad: NextLoad): Promise<unknown> {
  if (!guard) throw new Error('mcp-warden: module guard hooks were not initialized');
  (await guard).url(url);
  return nextLoad(url, context);
}
