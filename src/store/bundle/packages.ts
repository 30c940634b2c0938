import semver from 'semver';
import * as v from 'valibot';
import { lockfileProblem as packageLockfileProblem } from '../package-lockfile.js';
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

const SHA512 = /^sha512-[A-Za-z0-9+/]{86}==$/;

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

/** What is wrong with a package's lockfile, as "<pointer>: <problem>"; undefined when the store can use it: the
 *  rules of package-lockfile.ts, with no `resolved` at all (npm takes each package from this machine's registry). */
export function lockfileProblem(p: BundlePackage, at: string): string | undefined {
  const problem = packageLockfileProblem(p.lockfile, { name: p.name, version: p.version, integrity: p.integrity, aliases: false });
  return problem === undefined ? undefined : `${at}${problem}`;
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
