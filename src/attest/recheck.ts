import fs from 'node:fs';
import { WardenError } from '../error.js';
import type { LaunchPlan } from './plan.js';
import { keyString, statKey } from './stat-key.js';

// After launch, once the server has loaded its code (its first line of output), every file and directory
// that was digested must still have the stat key it had: a file swapped in between digest and load and then
// swapped back still leaves a new ctime behind. One lstat each, no reading.

function currentKey(p: string): string | undefined {
  try {
    return keyString(statKey(fs.lstatSync(p, { bigint: true })));
  } catch {
    return undefined;
  }
}

/** Throws ARTIFACT_CHANGED naming the first path whose stat key moved since it was digested. */
export function recheckPlan(plan: LaunchPlan): void {
  for (const a of plan.artifacts) {
    if (a.key && currentKey(a.path) !== keyString(a.key)) {
      throw new WardenError('ARTIFACT_CHANGED', `${a.kind} ${a.path} changed after it was digested (between digest and load); the session was closed.`);
    }
    if (a.treeKeys) {
      for (const [p, k] of a.treeKeys) {
        if (currentKey(p) !== k) {
          throw new WardenError('ARTIFACT_CHANGED', `${p}, in the package tree ${a.path}, changed after it was digested (between digest and load); the session was closed.`);
        }
      }
    }
  }
}
