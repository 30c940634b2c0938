import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { WardenError } from '../error.js';
import type { Artifact, LaunchPlan } from './plan.js';
import { keyString, statKey } from './stat-key.js';

// After launch, once the server has loaded its code (its first line of output), every file and directory
// that was digested must still have the stat key it had: a file swapped in between digest and load and then
// swapped back still leaves a new ctime behind. One lstat each, no reading. The session starts this at the
// server's first line and awaits it before releasing anything to the client; it runs on this thread in slices
// of a few milliseconds, so that the handshake goes on in between (on the thread pool the same lstats cost this
// thread more than doing them: docs/adr/0020-parallel-tree-walk.md).

/** The longest this thread stats without letting other events run. */
const SLICE_MS = 4;

function currentKey(p: string): string | undefined {
  try {
    return keyString(statKey(fs.lstatSync(p, { bigint: true })));
  } catch {
    return undefined;
  }
}

/** Every digested path with its key and artifact, in the order they were digested. */
function expectedOf(plan: LaunchPlan): Array<[path: string, key: string, artifact: Artifact]> {
  const out: Array<[string, string, Artifact]> = [];
  for (const a of plan.artifacts) {
    if (a.key) out.push([a.path, keyString(a.key), a]);
    for (const [p, k] of a.treeKeys ?? []) out.push([p, k, a]);
  }
  return out;
}

/** Rejects with ARTIFACT_CHANGED naming the first path, in digest order, whose stat key moved since it was digested
 *  (or that is gone); rejects with nothing else. */
export function recheckPlan(plan: LaunchPlan): Promise<void> {
  const expected = expectedOf(plan);
  let i = 0;
  return new Promise((resolve, reject) => {
    const slice = (): void => {
      const until = performance.now() + SLICE_MS;
      while (i < expected.length) {
        const [p, key, a] = expected[i++] as [string, string, Artifact];
        if (currentKey(p) !== key) {
          const what = a.path === p && a.key ? `${a.kind} ${p}` : `${p}, in the package tree ${a.path},`;
          reject(new WardenError('ARTIFACT_CHANGED', `${what} changed after it was digested (between digest and load); the session was closed.`));
          return;
        }
        if (i % 64 === 0 && performance.now() >= until) {
          setImmediate(slice);
          return;
        }
      }
      resolve();
    };
    setImmediate(slice);
  });
}

/** Drops what a plan kept for its re-check (each package tree's stat keys, its directories): a session that lives
 *  for hours would keep ~1 MB of strings for a tree of 4,400 files (docs/adr/0069-run-memory-on-node-24.md). */
export function dropRecheckKeys(plan: LaunchPlan): void {
  for (const a of plan.artifacts) {
    delete a.treeKeys;
    delete a.treeDirs;
  }
}
