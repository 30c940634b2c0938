import { exitWhenFlushed, settle } from './outcome.js';
import { runVerb } from './run.js';

// `[--home DIR] run ID` as a client starts it, the launch whose time matters: scripts/bundle.mjs builds this file
// and everything it imports into one file, dist/bundle/plain-run.js, which main.ts imports by its path (node
// 24: one file of `run`'s code imports in less CPU than its ~22 chunks, docs/adr/0056-launch-on-node-24.md). It
// settles its own outcome (./outcome.ts): a refusal thrown here is this file's WardenError, not main's.

export function startPlainRun(home: string | undefined, id: string): void {
  settle(runVerb(home, id).then(exitWhenFlushed));
}
