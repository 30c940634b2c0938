import type { LaunchPlan } from './plan.js';

// The attested set of a node server: the files its module guard lets it load (docs/adr/0013-module-guard-
// preload.md). Everything in it was digested for this very launch: the script, every file of the package tree
// (the tree digest's stat keys name them, directories aside), and the modules recorded at enrollment.

/** Realpaths the server may load, or undefined when the plan is not node running a script. */
export function attestedFiles(plan: LaunchPlan): string[] | undefined {
  if (!plan.nodeScript) return undefined;
  const files = [plan.nodeScript];
  for (const a of plan.artifacts) {
    if (a.kind === 'module') files.push(a.path);
    if (a.kind === 'package' && a.treeKeys) {
      const dirs = new Set(a.treeDirs);
      for (const p of a.treeKeys.keys()) if (!dirs.has(p)) files.push(p);
    }
  }
  return files;
}
