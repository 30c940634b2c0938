import fs from 'node:fs';
import path from 'node:path';
import { WardenError, errnoOf } from '../error.js';
import type { BundleServer, TrustBundle } from '../store/bundle/format.js';
import { UNSIGNED_ADMISSIONS, type BundlePackage } from '../store/bundle/packages.js';
import { isStoreRef, mapBundlePaths, toStoreRef } from '../store/bundle/store-refs.js';
import { entryDir, readInstallRecord } from '../store/package-store.js';
import type { HomePaths } from '../store/paths.js';

// `bundle create` for servers installed into the sealed store (docs/adr/0029-store-servers-in-bundles.md): what
// each of their store entries is (package, publisher or unsigned admission, lockfile without registry URLs), and
// every path inside those entries written relative to the store, so the bundle does not depend on this home.

const MAX_LOCKFILE = 16 * 1024 * 1024;

function refuse(message: string): WardenError {
  return new WardenError('BUNDLE_INVALID', `${message} The bundle was not written.`);
}

/** The entry's package-lock.json as a bundle carries it: lockfileVersion 3, every `resolved` URL removed. */
function lockfileOf(dir: string, entry: string): Record<string, unknown> {
  const file = path.join(dir, 'package-lock.json');
  let lock: { lockfileVersion?: unknown; requires?: unknown; packages?: unknown };
  try {
    if (fs.statSync(file).size > MAX_LOCKFILE) throw refuse(`the lockfile ${file} of store entry ${entry} is larger than ${MAX_LOCKFILE} bytes.`);
    lock = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof lock;
  } catch (err) {
    if (err instanceof WardenError) throw err;
    throw refuse(`the lockfile ${file} of store entry ${entry} cannot be read (${errnoOf(err) ?? (err as Error).message}); reinstall the server with 'mcp-warden install'.`);
  }
  if (lock.lockfileVersion !== 3 || lock.packages === null || typeof lock.packages !== 'object') {
    throw refuse(`the lockfile ${file} of store entry ${entry} is not an npm lockfile version 3 (written by npm 7 or later); reinstall the server with 'mcp-warden install'.`);
  }
  const packages = Object.fromEntries(
    Object.entries(lock.packages as Record<string, Record<string, unknown>>).map(([key, e]) => {
      const { resolved: _, ...rest } = e;
      return [key, key === '' ? e : rest];
    }),
  );
  return { lockfileVersion: 3, name: 'mcp-warden-store-entry', requires: true, packages };
}

/** The `packages` of a bundle: one per store entry a bundled server was installed into. */
export function bundlePackages(paths: HomePaths, servers: Record<string, BundleServer>): Record<string, BundlePackage> {
  const out: Record<string, BundlePackage> = {};
  for (const [id, s] of Object.entries(servers)) {
    if (!s.package || Object.hasOwn(out, s.package.store)) continue;
    const entry = s.package.store;
    const dir = entryDir(paths, entry);
    const record = readInstallRecord(dir);
    if (!record) throw refuse(`server '${id}' runs from the store entry ${dir}, which is missing or has no install record; reinstall it with 'mcp-warden install ${s.package.name}@${s.package.version}'.`);
    const { name, version, integrity } = record.package;
    if (name !== s.package.name || version !== s.package.version || integrity !== s.package.integrity) {
      throw refuse(`server '${id}' names ${s.package.name}@${s.package.version} in store entry ${entry}, whose install record is of ${name}@${version}; reinstall it with 'mcp-warden install'.`);
    }
    const pv = record.provenance;
    const admission = 'unsigned' in pv ? ((UNSIGNED_ADMISSIONS as readonly string[]).includes(pv.admittedBy) ? pv.admittedBy : 'unknown') : undefined;
    Object.defineProperty(out, entry, {
      value: {
        name,
        version,
        integrity,
        ...('identity' in pv ? { identity: { issuer: pv.identity.issuer, repository: pv.identity.repository, workflow: pv.identity.workflow } } : { unsigned: admission as BundlePackage['unsigned'] }),
        lockfile: lockfileOf(dir, entry),
      },
      enumerable: true,
    });
  }
  return out;
}

/** The store's directory as the home names it and as it really is (the paths of artifacts are real paths). */
function storeDirs(paths: HomePaths): string[] {
  let real = paths.storeDir;
  try {
    real = fs.realpathSync(paths.storeDir);
  } catch {
    // no store: no path can be inside it
  }
  return [...new Set([paths.storeDir, real])];
}

/** --machine-local and --accept name paths of this machine; a store path is pinned to its tree, always. */
export function refuseStoreOverrides(paths: HomePaths, overridden: readonly string[]): void {
  const dirs = storeDirs(paths);
  const inStore = overridden.find((p) => dirs.some((d) => p.startsWith(d + path.sep)));
  if (inStore) throw new WardenError('USAGE', `${inStore} is inside the sealed store: each machine installs it from the bundle and must reproduce its digest, so it cannot be machine-local or accept other digests.`);
}

/** The bundle with every path inside a carried store entry written as a store path (store-refs.ts). */
export function withStorePaths(paths: HomePaths, b: TrustBundle): TrustBundle {
  const dirs = storeDirs(paths);
  const entries = new Set(Object.keys(b.packages));
  return mapBundlePaths(b, (value, at) => {
    if (isStoreRef(value)) throw refuse(`${at} is ${JSON.stringify(value.slice(0, 80))}, which a bundle would read as a path inside the store (store:<entry>/<path>).`);
    const ref = toStoreRef(value, dirs, entries);
    if (ref !== undefined) return ref;
    const inside = dirs.find((d) => value.startsWith(d + path.sep));
    if (inside) throw refuse(`${at} is ${value}, inside the store entry ${value.slice(inside.length + 1).split('/')[0]}, which no bundled server was installed into; bundle the server installed there too (--servers).`);
    return value;
  });
}
