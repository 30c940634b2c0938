import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './warden.js';

// The node releases the module guard is tested on: the one running the tests (node 20: loader hooks on a thread
// of their own, module.register), and node 22 and 24 from test/nodes (module.registerHooks: hooks in the loading
// thread; docs/adr/0032-in-thread-module-hooks.md). `npm test` installs them (scripts/test-nodes.mjs, from `pretest`).

function installed(name: string): string {
  const bin = path.join(ROOT, 'test/nodes/node_modules', name, 'bin/node');
  if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: the module guard is tested on it. Run 'npm test' (its pretest step installs test/nodes) or 'node scripts/test-nodes.mjs'.`);
  return bin;
}

/** Node releases whose module.registerHooks the guard uses, as [label, path to node]. */
export const IN_THREAD_NODES: Array<[string, string]> = [
  ['node 22', installed('node22')],
  ['node 24', installed('node24')],
];

/** Every node release the guard is tested on, this one first. */
export const GUARD_NODES: Array<[string, string]> = [[`node ${process.versions.node} (this one)`, process.execPath], ...IN_THREAD_NODES];

/** Names of the threads of a process (Linux names node 22+'s threads: a loader-hooks thread is "WorkerThread"). */
export function threadNames(pid: number): string[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((t) => {
    try {
      return fs.readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim();
    } catch {
      return '';
    }
  });
}
