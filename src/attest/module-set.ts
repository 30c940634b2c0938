import type { LaunchPlan } from './plan.js';
import { keyString } from './stat-key.js';

// The attested set of a node server: the files its module guard lets it load (docs/adr/0013-module-guard-
// preload.md). Everything in it was digested for this very launch: the script, every file of the package tree
// (the tree digest's stat keys name them, directories aside), and the modules recorded at enrollment.

/** Realpaths the server may load, each with the stat key it had when it was digested (the guard loads a file
 *  only while it still has that key), or undefined when the plan is not node running a script. */
export function attestedFiles(plan: LaunchPlan): Map<string, string> | undefined {
  if (!plan.nodeScript) return undefined;
  const files = new Map<string, string>();
  for (const a of plan.artifacts) {
    if ((a.kind === 'script' && a.path === plan.nodeScript) || a.kind === 'module') files.set(a.path, a.key ? keyString(a.key) : '');
    if (a.kind === 'package' && a.treeKeys) {
      const dirs = new Set(a.treeDirs);
      for (const [p, k] of a.treeKeys) if (!dirs.has(p)) files.set(p, k);
    }
  }
  return files;
}
