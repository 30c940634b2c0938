import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WardenError } from '../error.js';
import type { DigestCache } from './cache.js';
import { digestFile } from './digest.js';
import { keyString, statKey } from './stat-key.js';

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
  /** What the digest was computed from, package by package (./tree-listing.ts names what changed with it). */
  listing: TreeListing;
}

/** The lines each package directory's digest is over (sorted as digested), and the missing dependencies. */
export interface TreeListing {
  packages: Array<{ dir: string; name: string; version: string; lines: string[] }>;
  missing: string[];
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

class Budget {
  files = 0;
  readonly keys = new Map<string, string>();
  readonly dirs: string[] = [];
  take(root: string): void {
    if (++this.files > MAX_FILES) {
      throw new WardenError('PACKAGE_TREE_INVALID', `the package tree of ${root} has more than ${MAX_FILES} files; the warden will not digest it.`);
    }
  }
}

/** The digest of a package directory over its sorted entry lines (also ./tree-listing.ts's check of a listing). */
export function linesDigest(lines: string[]): string {
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

/** The sha256 of a package closure from its packages' lines and its missing dependencies. */
export function closureDigest(listing: TreeListing): string {
  const lines = listing.packages.map((p) => `${p.name}\0${p.version}\0${linesDigest(p.lines)}`).sort();
  for (const m of listing.missing) lines.push(`missing\0${m}`);
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

function digestDir(pkgDir: string, cache: DigestCache | undefined, budget: Budget): string[] {
  // Sorted by relative path (the lines' text after their two-character type prefix). Each line is kept beside its
  // path so the sort compares the paths themselves: slicing both lines in every comparison made ~50 strings per
  // entry for the collector (a warm walk of server-everything's tree, docs/adr/0056-launch-on-node-24.md).
  const entries: Array<{ rel: string; line: string }> = [];
  // `abs` is a real path (digestPackageTree's queue holds real paths) and a name from readdir has no separator
  // and is neither '.' nor '..', so `${abs}/${name}` is what path.join would give, without its normalizing pass.
  const walk = (rel: string, abs: string): void => {
    budget.keys.set(abs, keyString(statKey(fs.lstatSync(abs, { bigint: true }))));
    budget.dirs.push(abs);
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      const name = entry.name;
      if (!rel && name === 'node_modules') continue;
      const childRel = rel ? `${rel}/${name}` : name;
      budget.take(pkgDir);
      const childAbs = abs === '/' ? `/${name}` : `${abs}/${name}`;
      if (entry.isSymbolicLink()) {
        entries.push({ rel: childRel, line: `l\0${childRel}\0${fs.readlinkSync(childAbs)}` });
      } else if (entry.isDirectory()) {
        entries.push({ rel: childRel, line: `d\0${childRel}` });
        walk(childRel, childAbs);
      } else if (entry.isFile()) {
        const d = digestFile(childAbs, cache);
        budget.keys.set(childAbs, keyString(d.key));
        entries.push({ rel: childRel, line: `f\0${childRel}\0${d.executable ? 'x' : '-'}\0${d.sha256}` });
      } else {
        entries.push({ rel: childRel, line: `o\0${childRel}` });
      }
    }
  };
  walk('', pkgDir);
  entries.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return entries.map((e) => e.line);
}

/** Digests the package closure rooted at `root`. */
export function digestPackageTree(root: string, cache?: DigestCache): PackageTree {
  const budget = new Budget();
  const seen = new Map<string, TreeListing['packages'][number]>(); // by realpath
  const missing = new Set<string>();
  const queue = [fs.realpathSync(root)];
  while (queue.length > 0) {
    const dir = queue.shift() as string;
    if (seen.has(dir)) continue;
    if (seen.size >= MAX_PACKAGES) {
      throw new WardenError('PACKAGE_TREE_INVALID', `the package tree of ${root} has more than ${MAX_PACKAGES} packages; the warden will not digest it.`);
    }
    const manifest = readManifest(dir);
    seen.set(dir, { dir, name: manifest.name, version: manifest.version, lines: digestDir(dir, cache, budget) });
    for (const dep of manifest.deps) {
      const found = resolvePackage(dep, dir);
      if (found) queue.push(found);
      else if (!manifest.optional.has(dep)) missing.add(`${manifest.name}>${dep}`);
    }
  }
  // Where each package was found: a package added, removed or renamed there changes what Node resolves.
  const containers = new Set<string>();
  for (const dir of seen.keys()) {
    const up = path.dirname(dir);
    if (path.basename(up) === 'node_modules') containers.add(up);
    else if (path.basename(path.dirname(up)) === 'node_modules' && path.basename(up).startsWith('@')) containers.add(up).add(path.dirname(up));
  }
  const listing: TreeListing = { packages: [...seen.values()], missing: [...missing].sort() };
  return {
    root: fs.realpathSync(root),
    sha256: closureDigest(listing),
    packages: seen.size,
    files: budget.files,
    missing: [...missing].sort(),
    keys: budget.keys,
    dirs: [...new Set([...budget.dirs, ...containers])].sort(),
    listing,
  };
}
