import type { Artifact } from '../attest/plan.js';
import { describeTreeChanges, treeChanges } from '../attest/tree-listing.js';
import type { HomePaths } from '../store/paths.js';
import { loadTreeListing } from '../store/tree-listings.js';

// A package tree refused as changed (its digest is not the allowlisted one), named file by file for the launch
// refusal and for `status`: the listing kept when the allowlisted tree was allowlisted against the one just
// digested (issue 28, item 2).

/** Sentences naming what changed in package tree `artifact` since `expected` was allowlisted ('' for any other
 *  artifact). */
export function packageChangeText(paths: HomePaths, artifact: Artifact, expected: string): string {
  if (artifact.kind !== 'package' || !artifact.treeListing) return '';
  const recorded = loadTreeListing(paths, expected);
  if (!recorded) return "The warden kept no file list of the allowlisted tree (it was allowlisted by a release that kept none, or the list in its cache is gone), so it cannot name what changed; compare the tree with a fresh install of the package.";
  return describeTreeChanges(artifact.path, treeChanges(recorded, artifact.treeListing));
}
