import { WardenError } from '../error.js';
import { POOL_CONCURRENCY, poolIo } from './fs-io.js';
import type { LaunchPlan } from './plan.js';
import { keyString, statKey } from './stat-key.js';

// After launch, once the server has loaded its code (its first line of output), every file and directory
// that was digested must still have the stat key it had: a file swapped in between digest and load and then
// swapped back still leaves a new ctime behind. One lstat each, no reading, on the thread pool: the session
// starts this at the server's first line and awaits it before releasing anything to the client, so it runs
// while the handshake goes on (docs/adr/0019-parallel-tree-walk.md).

interface Expected {
  path: string;
  key: string;
  /** The message when this path's key moved. */
  changed: () => string;
}

/** Every digested path with its key, in the order the artifacts and their trees were digested. */
function expectedOf(plan: LaunchPlan): Expected[] {
  const out: Expected[] = [];
  for (const a of plan.artifacts) {
    if (a.key) out.push({ path: a.path, key: keyString(a.key), changed: () => `${a.kind} ${a.path} changed after it was digested (between digest and load); the session was closed.` });
    for (const [p, k] of a.treeKeys ?? []) {
      out.push({ path: p, key: k, changed: () => `${p}, in the package tree ${a.path}, changed after it was digested (between digest and load); the session was closed.` });
    }
  }
  return out;
}

/**
 * Re-stats every digested path, `concurrency` lstat calls in flight; rejects with ARTIFACT_CHANGED naming the
 * first path, in digest order, whose stat key moved or that can no longer be stat'ed. Never rejects with anything
 * else.
 */
export function recheckPlan(plan: LaunchPlan, concurrency = POOL_CONCURRENCY): Promise<void> {
  const expected = expectedOf(plan);
  const same: boolean[] = new Array<boolean>(expected.length).fill(false);
  const io = poolIo(concurrency);
  return new Promise((resolve, reject) => {
    let left = expected.length;
    const settle = (): void => {
      const first = same.indexOf(false);
      if (first < 0) resolve();
      else reject(new WardenError('ARTIFACT_CHANGED', (expected[first] as Expected).changed()));
    };
    if (left === 0) return settle();
    expected.forEach((e, i) => {
      io.lstat(e.path, (err, st) => {
        same[i] = !err && st !== undefined && keyString(statKey(st)) === e.key;
        if (--left === 0) settle();
      });
    });
  });
}
