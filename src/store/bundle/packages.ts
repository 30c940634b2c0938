import semver from 'semver';
import * as v from 'valibot';
import { entryName } from '../package-store.js';
import { pinnedIdentitySchema } from '../servers.js';
import type { TrustBundle } from './format.js';
import { isStoreRef, parseStoreRef, storeRefsOf } from './store-refs.js';

// The `packages` of a trust bundle (docs/adr/0029-store-servers-in-bundles.md): for each store entry a bundled
// server was installed into, what `apply` needs to make the same entry on another machine through `install`'s
// own path: the package (name, version, sha512 integrity), the publisher its provenance must name (or that it
// was admitted without one), and the entry's lockfile without registry URLs. Read as strictly as the rest of the
// bundle: the lockfile is npm's format, so its entries are checked for what the store relies on, not for npm's
// every field.

const MAX_LOCK_PACKAGES = 20_000;
const SHA512 = /^sha512-[A-Za-z0-9+/]{86}==$/;
/** A key of a lockfile's `packages` other than the root: node_modules/<name>(/node_modules/<name>)*. */
const LOCK_KEY = /^node_modules\/(?:@[^/.][^/]*\/)?[^/.][^/]*(?:\/node_modules\/(?:@[^/.][^/]*\/)?[^/.][^/]*)*$/;

/** How a package admitted without provenance was admitted on the machine that made the bundle. */
export const UNSIGNED_ADMISSIONS = ['--allow-unsigned', 'prompt', 'upgrade', 'unknown'] as const;

export const bundlePackageSchema = v.strictObject({
  name: v.pipe(v.string(), v.regex(/^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/, 'expected an npm package name')),
  version: v.pipe(v.string(), v.check((s) => semver.valid(s) === s, 'expected an exact version')),
  integrity: v.pipe(v.string(), v.regex(SHA512, 'expected a sha512 integrity (sha512-<base64>)')),
  /** The publisher the package's provenance must name (issuer, source repository, workflow). */
  identity: v.optional(pinnedIdentitySchema),
  /** Present instead of `identity`: the package was admitted without provenance, and how. */
  unsigned: v.optional(v.picklist(UNSIGNED_ADMISSIONS)),
  /** The store entry's package-lock.json, lockfileVersion 3, without `resolved` URLs. */
  lockfile: v.record(v.string(), v.unknown()),
});

export type BundlePackage = v.InferOutput<typeof bundlePackageSchema>;

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

const DEPENDENCY_FIELDS = ['dependencies', 'optionalDependencies', 'peerDependencies'] as const;

/** The lockfile's packages node reaches from `top` through declared dependencies, each found where Node's
 *  resolution finds it (its own node_modules, then each one above); bundled ones come with their parent. */
function reachable(packages: Record<string, unknown>, top: string): Set<string> {
  const seen = new Set<string>();
  const queue = [top];
  while (queue.length > 0) {
    const key = queue.pop() as string;
    if (seen.has(key)) continue;
    seen.add(key);
    const e = packages[key] as Record<string, unknown>;
    const names = DEPENDENCY_FIELDS.flatMap((f) => (isObject(e[f]) ? Object.keys(e[f]) : []));
    for (const name of names) {
      for (let dir = key; ; dir = dir.slice(0, dir.lastIndexOf('/node_modules/'))) {
        const at = `${dir}/node_modules/${name}`;
        if (Object.hasOwn(packages, at)) {
          queue.push(at);
          break;
        }
        if (dir.lastIndexOf('/node_modules/') < 0) {
          if (Object.hasOwn(packages, `node_modules/${name}`)) queue.push(`node_modules/${name}`);
          break;
        }
      }
    }
  }
  return seen;
}

/** What is wrong with a package's lockfile, as "<pointer>: <problem>"; undefined when the store can use it. */
export function lockfileProblem(p: BundlePackage, at: string): string | undefined {
  const lock = p.lockfile;
  if (lock.lockfileVersion !== 3) return `${at}/lockfileVersion: expected 3`;
  const packages = lock.packages;
  if (!isObject(packages)) return `${at}/packages: expected an object`;
  const keys = Object.keys(packages);
  if (keys.length > MAX_LOCK_PACKAGES) return `${at}/packages: more than ${MAX_LOCK_PACKAGES} packages`;
  const root = packages[''];
  const deps = isObject(root) ? root.dependencies : undefined;
  if (!isObject(deps) || Object.keys(deps).length !== 1 || deps[p.name] !== p.version) return `${at}/packages/: expected the one dependency ${p.name} at ${p.version}`;
  const extra = Object.keys(root as object).find((k) => !['name', 'version', 'license', 'dependencies'].includes(k));
  if (extra !== undefined) return `${at}/packages//${extra}: not a field of a store entry's own package`;
  const top = packages[`node_modules/${p.name}`];
  if (!isObject(top) || top.version !== p.version || top.integrity !== p.integrity) return `${at}/packages/node_modules~1${p.name.replace('/', '~1')}: expected version ${p.version} with the package's integrity`;
  for (const key of keys) {
    if (key === '') continue;
    const here = `${at}/packages/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    const e = packages[key];
    if (!LOCK_KEY.test(key)) return `${here}: not a node_modules path`;
    if (!isObject(e)) return `${here}: expected an object`;
    if ('resolved' in e) return `${here}/resolved: a bundle carries no registry URL (npm takes each package from this machine's registry)`;
    if ('link' in e) return `${here}/link: the store installs registry packages only`;
    // npm installs an entry's `name`@`version` at its path: another name there is an alias (npm:other@x), another
    // package in the place of the one a package.json declares.
    if ('name' in e && e.name !== key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length)) return `${here}/name: an alias of another package (npm:…); the store installs each package under its own name`;
    if (e.inBundle === true) continue;
    if (typeof e.version !== 'string' || typeof e.integrity !== 'string' || !SHA512.test(e.integrity)) return `${here}: expected a version and a sha512 integrity`;
  }
  // Every package installed must be one the package's tree (and so its digest) reaches: nothing rides along.
  const reached = reachable(packages, `node_modules/${p.name}`);
  const stray = keys.find((k) => k !== '' && !reached.has(k) && !(packages[k] as Record<string, unknown>).inBundle);
  if (stray !== undefined) return `${at}/packages/${stray.replaceAll('~', '~0').replaceAll('/', '~1')}: no dependency of ${p.name} leads to it, so its tree digest would not cover it`;
  return undefined;
}

/**
 * Servers, packages and store references agree: each package is the entry its name, version and integrity name,
 * says either who must have built it or that it was admitted unsigned, has a usable lockfile, a pinned tree
 * artifact, and a server installed into it; each server's `package` is one of them with the same publisher; each
 * `store:` path names a carried entry. Returns the first problem, as "<pointer>: <problem>".
 */
export function packagesProblem(b: TrustBundle): string | undefined {
  const used = new Set<string>();
  for (const [id, s] of Object.entries(b.servers)) {
    if (!s.package) continue;
    const at = `/servers/${id}/package`;
    const p = Object.hasOwn(b.packages, s.package.store) ? b.packages[s.package.store] : undefined;
    if (!p) return `${at}/store: the store entry ${s.package.store} is not among /packages`;
    if (p.name !== s.package.name || p.version !== s.package.version || p.integrity !== s.package.integrity) return `${at}: not the package /packages/${s.package.store} names`;
    if (s.provenance === 'required' && !p.identity) return `/servers/${id}/provenance: "required", but /packages/${s.package.store} names no publisher`;
    if (s.identity && p.identity && (s.identity.issuer !== p.identity.issuer || s.identity.repository !== p.identity.repository || s.identity.workflow !== p.identity.workflow)) return `/servers/${id}/identity: another publisher than /packages/${s.package.store} names`;
    used.add(s.package.store);
  }
  for (const [entry, p] of Object.entries(b.packages)) {
    const at = `/packages/${entry}`;
    if (entry !== entryName(p.name, p.version, p.integrity)) return `${at}: the entry of ${p.name}@${p.version} with that integrity is ${entryName(p.name, p.version, p.integrity)}`;
    if ((p.identity === undefined) === (p.unsigned === undefined)) return `${at}: expected exactly one of 'identity' and 'unsigned'`;
    if (!used.has(entry)) return `${at}: no server of the bundle is installed into it`;
    const tree = b.artifacts.find((a) => a.kind === 'package' && a.path === `store:${entry}/node_modules/${p.name}`);
    if (!tree || !('accept' in tree)) return `${at}: /artifacts pins no package tree store:${entry}/node_modules/${p.name}`;
    const problem = lockfileProblem(p, `${at}/lockfile`);
    if (problem) return problem;
  }
  for (const { value, at } of storeRefsOf(b)) {
    const ref = parseStoreRef(value);
    if (!ref) return `${at}: ${JSON.stringify(value.slice(0, 80))} is not a store path (store:<entry>/<normalized path inside it>)`;
    if (!Object.hasOwn(b.packages, ref.entry)) return `${at}: the store entry ${ref.entry} is not among /packages`;
  }
  const local = b.artifacts.find((a) => isStoreRef(a.path) && !('accept' in a));
  if (local) return `/artifacts: the ${local.kind} ${local.path} is in the store, so it is pinned, never machine-local`;
  return undefined;
}
