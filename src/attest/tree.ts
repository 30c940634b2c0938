import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WardenError } from '../error.js';
import type { DigestCache } from './cache.js';
import { POOL_CONCURRENCY, poolIo, syncIo, type Io } from './fs-io.js';
import { replay, Walk, type Listing } from './tree-walk.js';

// The package tree of an interpreted Node server: its package and, resolved the way Node resolves them, every
// package it depends on (dependencies, optionalDependencies, peerDependencies), transitively. Each package
// directory is digested Merkle-style over its sorted relative paths, entry types, the owner-executable bit,
// symlink targets and file digests (its own node_modules/ is left out: the packages there that it can load
// are in the closure). The closure digest is over (name, version, package digest) sorted, so it does not
// depend on where npm hoisted each package. See docs/adr/0003-package-tree-digest.md.

const MAX_FILES = 200_000;
const MAX_PACKAGES = 5_000;

export interface PackageTree {
  /** The directory of the nearest package.json above the script. */
  root: string;
  sha256: string;
  packages: number;
  files: number;
  /** Dependencies named in a package.json but not installed (recorded in the digest). */
  missing: string[];
  /** Stat key of every directory and file digested, for a cheap re-check after launch. */
  keys: Map<string, string>;
  /** Every directory digested, and each node_modules directory a package was found in (for the daemon to watch). */
  dirs: string[];
}

/** The nearest directory at or above `from` holding a package.json, or undefined. */
export function findPackageRoot(from: string): string | undefined {
  let dir = from;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && path.basename(dir) !== 'node_modules') return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

interface Manifest {
  name: string;
  version: string;
  deps: string[];
  optional: Set<string>;
}

function readManifest(dir: string): Manifest {
  const file = path.join(dir, 'package.json');
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new WardenError('PACKAGE_TREE_INVALID', `cannot read ${file}: ${(err as Error).message}`);
  }
  const names = (v: unknown): string[] => (v && typeof v === 'object' ? Object.keys(v) : []);
  const optional = new Set([...names(json.optionalDependencies), ...names(json.peerDependencies)]);
  const deps = [...new Set([...names(json.dependencies), ...optional])].sort();
  return { name: String(json.name ?? path.basename(dir)), version: String(json.version ?? ''), deps, optional };
}

/** Finds `name` from `dir` as Node does: dir/node_modules/name, then each parent's. */
function resolvePackage(name: string, from: string): string | undefined {
  let dir = from;
  for (;;) {
    if (path.basename(dir) !== 'node_modules') {
      const candidate = path.join(dir, 'node_modules', name);
      if (fs.existsSync(path.join(candidate, 'package.json'))) return fs.realpathSync(candidate);
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

interface Collected {
  root: string;
  walk: Walk;
  packages: Array<{ dir: string; name: string; version: string; listing: Listing }>;
  missing: Set<string>;
  /** The error that stopped the search for packages, after the walks of every package found before it. */
  stopped?: unknown;
}

/**
 * Finds the packages of the closure one at a time, in breadth-first order (reading a package.json and resolving
 * a dependency are a few calls each), and starts the walk of each as it is found: with the thread pool's `Io`
 * the walks proceed while the search goes on.
 */
function collect(root: string, cache: DigestCache | undefined, io: Io): Collected {
  const real = fs.realpathSync(root);
  const c: Collected = { root: real, walk: new Walk(io, cache, MAX_FILES), packages: [], missing: new Set() };
  const seen = new Set<string>();
  const queue = [real];
  while (queue.length > 0 && !c.walk.over) {
    const dir = queue.shift() as string;
    if (seen.has(dir)) continue;
    try {
      if (seen.size >= MAX_PACKAGES) {
        throw new WardenError('PACKAGE_TREE_INVALID', `the package tree of ${root} has more than ${MAX_PACKAGES} packages; the warden will not digest it.`);
      }
      seen.add(dir);
      const manifest = readManifest(dir);
      c.packages.push({ dir, name: manifest.name, version: manifest.version, listing: c.walk.dir(dir, true) });
      for (const dep of manifest.deps) {
        const found = resolvePackage(dep, dir);
        if (found) queue.push(found);
        else if (!manifest.optional.has(dep)) c.missing.add(`${manifest.name}>${dep}`);
      }
    } catch (err) {
      c.stopped = err;
      break;
    }
  }
  return c;
}

/** The tree from complete walks: their lines, keys and errors in the order of the one-call-at-a-time walk. */
function assemble(c: Collected): PackageTree {
  // More entries than the budget: the walks stopped part way, so this is the error, whatever else went wrong
  // (the closure as a whole is over the budget; the message names its root).
  if (c.walk.over) {
    throw new WardenError('PACKAGE_TREE_INVALID', `the package tree of ${c.root} has more than ${MAX_FILES} files; the warden will not digest it.`);
  }
  const keys = new Map<string, string>();
  const walked: string[] = [];
  const seen = new Map<string, string>(); // realpath -> "name\0version\0digest"
  for (const p of c.packages) seen.set(p.dir, `${p.name}\0${p.version}\0${replay(p.dir, p.listing, keys, walked)}`);
  if (c.stopped !== undefined) throw c.stopped;
  const missing = c.missing;
  const lines = [...seen.values()].sort();
  // Where each package was found: a package added, removed or renamed there changes what Node resolves.
  const containers = new Set<string>();
  for (const dir of seen.keys()) {
    const up = path.dirname(dir);
    if (path.basename(up) === 'node_modules') containers.add(up);
    else if (path.basename(path.dirname(up)) === 'node_modules' && path.basename(up).startsWith('@')) containers.add(up).add(path.dirname(up));
  }
  for (const m of [...missing].sort()) lines.push(`missing\0${m}`);
  return {
    root: c.root,
    sha256: createHash('sha256').update(lines.join('\n')).digest('hex'),
    packages: seen.size,
    files: c.walk.entries,
    missing: [...missing].sort(),
    keys,
    dirs: [...new Set([...walked, ...containers])].sort(),
  };
}

/** Digests the package closure rooted at `root`, one call at a time on this thread. */
export function digestPackageTree(root: string, cache?: DigestCache): PackageTree {
  return assemble(collect(root, cache, syncIo)); // syncIo completes every call before it returns
}

/**
 * Digests the package closure rooted at `root` with its lstat, readdir and readlink calls on libuv's thread pool,
 * `concurrency` in flight: the same digest, keys, directories and errors as digestPackageTree.
 */
export async function digestPackageTreeAsync(root: string, cache?: DigestCache, concurrency = POOL_CONCURRENCY): Promise<PackageTree> {
  const c = collect(root, cache, poolIo(concurrency));
  await c.walk.idle();
  return assemble(c);
}
