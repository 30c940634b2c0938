import fs from 'node:fs';
import path from 'node:path';
import { WardenError } from '../error.js';
import { DigestCache } from './cache.js';
import { digestFileAsync, readHead } from './digest.js';
import type { ArtifactKind } from './plan.js';
import { digestPackageTree, type TreeListing } from './tree.js';

/** Digests a path the way the allowlist binds it: a directory with package.json is a package tree, an ELF file named
 *  like a shared object (`*.so`, `*.so.N…`) a library, any other ELF file an executable, any other file a script. `onTree` gets a package tree's listing (kept to name what changes later). */
export async function digestForAllowlist(target: string, cache: DigestCache = new DigestCache(), onTree?: (sha256: string, listing: TreeListing) => void): Promise<{ path: string; kind: ArtifactKind; sha256: string }> {
  let real: string;
  try {
    real = fs.realpathSync(path.resolve(target));
  } catch {
    throw new WardenError('COMMAND_NOT_FOUND', `${target} does not exist.`);
  }
  const st = fs.statSync(real);
  if (st.isDirectory()) {
    if (!fs.existsSync(path.join(real, 'package.json'))) {
      throw new WardenError('PACKAGE_TREE_INVALID', `${real} is a directory without a package.json; only package trees can be allowlisted as directories.`);
    }
    const tree = digestPackageTree(real, cache);
    onTree?.(tree.sha256, tree.listing);
    return { path: real, kind: 'package', sha256: tree.sha256 };
  }
  const elf = readHead(real, 4).equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  const kind: ArtifactKind = !elf ? 'script' : /\.so(\.\d+)*$/.test(path.basename(real)) ? 'library' : 'executable';
  return { path: real, kind, sha256: (await digestFileAsync(real, cache)).sha256 };
}
