import fs from 'node:fs';
import { WardenError } from '../error.js';
import { makeCandidate, type Candidate } from '../enroll/npm/candidate.js';
import { auditInstalled, publisherRecord } from '../enroll/npm/install.js';
import { putInStore, type StoreEntry } from '../enroll/npm/store-entry.js';
import { describePublisher, samePublisher } from '../provenance/identity.js';
import type { TrustRoot } from '../provenance/trust-root.js';
import type { TrustBundle } from '../store/bundle/format.js';
import { fromStoreRef, mapBundlePaths, parseStoreRef } from '../store/bundle/store-refs.js';
import { removeEntry, withStoreLock } from '../store/package-store.js';
import type { HomePaths } from '../store/paths.js';
import { loadTrustRoot } from '../store/trust-root-file.js';

// `bundle apply` for servers installed into the sealed store (docs/adr/0029-store-servers-in-bundles.md): each
// package the bundle carries is fetched and verified as `install` does (the registry's sha512 must be the
// bundle's, the provenance must name the bundle's publisher, or the operator must agree to an unsigned one), put
// into this machine's store from the bundle's lockfile, and its tree must hash to the digest the bundle pins. All
// of it before the trust files change, under the store's lock, held until they name the entries; a refusal
// removes the entries this apply made.

export interface InstalledPackage {
  entry: string;
  /** The bundle's servers installed into it. */
  servers: string[];
  store: StoreEntry;
  c: Candidate;
}

/** A refusal of install's path, said of the bundle's servers (install's own sentence kept). */
function ofBundle(err: unknown, servers: string[]): unknown {
  if (!(err instanceof WardenError)) return err;
  return new WardenError(err.code, `server${servers.length > 1 ? 's' : ''} '${servers.join("', '")}' of the trust bundle: ${err.message} The trust files were not changed.`);
}

/** Before anything is fetched: each server installed from a package the bundle says was admitted without
 *  provenance needs this machine's --allow-unsigned; one given for any other server is a typo, refused. */
export function checkUnsignedAgreed(b: TrustBundle, allowUnsigned: readonly string[]): void {
  for (const id of allowUnsigned) {
    const s = Object.hasOwn(b.servers, id) ? b.servers[id] : undefined;
    if (!s?.package || !b.packages[s.package.store]?.unsigned) {
      throw new WardenError('USAGE', `--allow-unsigned ${id}: the trust bundle has no server '${id}' installed from a package admitted without provenance; nothing was changed.`);
    }
  }
  for (const [id, s] of Object.entries(b.servers)) {
    const p = s.package ? b.packages[s.package.store] : undefined;
    if (p?.unsigned && !allowUnsigned.includes(id)) {
      throw new WardenError('PROVENANCE_MISSING', `server '${id}' of the trust bundle is installed from ${p.name}@${p.version}, which the bundle says was admitted without provenance (${p.unsigned}): nothing says which source and build produced it. Nothing was changed. If this machine agrees to run it unsigned, apply with --allow-unsigned ${id} (audited).`);
    }
  }
}

async function installOne(paths: HomePaths, b: TrustBundle, entry: string, root: TrustRoot, created: string[]): Promise<InstalledPackage> {
  const p = b.packages[entry] as TrustBundle['packages'][string];
  const servers = Object.keys(b.servers).filter((id) => b.servers[id]?.package?.store === entry).sort();
  const label = `${p.name}@${p.version}`;
  let c: Candidate;
  let store: StoreEntry;
  try {
    c = await makeCandidate(p.name, p.version, root, { integrity: p.integrity });
    if (p.identity && !c.provenance) throw new WardenError('PROVENANCE_MISSING', `${label} has no provenance here (${c.attestationsFrom === 'none' ? 'the registry serves no attestations for it' : 'its attestations hold no SLSA provenance'}), but the bundle pins its publisher ${describePublisher(p.identity)}.`);
    if (p.identity && c.provenance && !samePublisher(p.identity, c.provenance.identity)) {
      throw new WardenError('IDENTITY_MISMATCH', `${label} was built by ${describePublisher(c.provenance.identity)}, not by ${describePublisher(p.identity)} as the bundle pins.`);
    }
    store = await putInStore(paths, c, root, p.unsigned ? '--allow-unsigned' : undefined, p.lockfile);
  } catch (err) {
    throw ofBundle(err, servers);
  }
  if (store.created) created.push(store.dir);
  const tree = b.artifacts.find((a) => a.kind === 'package' && a.path === `store:${entry}/node_modules/${p.name}`);
  if (!tree || !('accept' in tree) || !tree.accept.includes(store.record.tree.sha256)) {
    const how = store.created ? "npm installed here from the bundle's lockfile" : 'this machine installed earlier, with other dependency versions,';
    throw new WardenError('BUNDLE_DIGEST_MISMATCH', `the package tree of ${label} that ${how} hashes to sha256 ${store.record.tree.sha256}, not ${tree && 'accept' in tree ? tree.accept.join(' or ') : 'a digest'} as the trust bundle pins (servers '${servers.join("', '")}'); nothing was changed.${store.created ? '' : ` Remove the servers that run from ${store.dir} (then 'mcp-warden store gc') and apply again.`}`);
  }
  return { entry, servers, store, c };
}

/** The bundle with its store paths made this machine's (the store's real path: artifacts are real paths). */
function localized(b: TrustBundle, storeDir: string): TrustBundle {
  return mapBundlePaths(b, (value) => {
    const ref = parseStoreRef(value);
    return ref ? fromStoreRef(ref, storeDir) : value;
  });
}

/** The allowlist record of an installed package's tree, as `install` writes it, keyed by the tree's path. */
export function treeProvenance(installed: readonly InstalledPackage[]): Map<string, unknown> {
  return new Map(
    installed.map(({ store, c }) => [store.pkgDir, { package: `${c.name}@${c.version}`, integrity: c.integrity, ...(c.provenance ? { publisher: publisherRecord(c.provenance.identity), verifiedAt: store.record.verifiedAt } : { unsigned: '--allow-unsigned' }) }]),
  );
}

/**
 * Installs the bundle's packages (agreed to: checkUnsignedAgreed) into this machine's store, then runs `commit` with the bundle's store paths
 * made this machine's; holds the store's lock throughout. A refusal before the commit point removes the entries
 * made here; after it (TRUST_COMMIT_INCOMPLETE) the change is decided and they stay.
 */
export async function withStorePackages<R>(paths: HomePaths, b: TrustBundle, by: string, commit: (local: TrustBundle, installed: InstalledPackage[]) => Promise<R>): Promise<R> {
  const root = loadTrustRoot(paths);
  const result = await withStoreLock(paths, async () => {
    const created: string[] = [];
    let decided = false;
    try {
      const installed: InstalledPackage[] = [];
      for (const entry of Object.keys(b.packages).sort()) installed.push(await installOne(paths, b, entry, root, created));
      const r = await commit(localized(b, fs.realpathSync(paths.storeDir)), installed);
      decided = true;
      return { r, installed };
    } catch (err) {
      if (err instanceof WardenError && err.code === 'TRUST_COMMIT_INCOMPLETE') decided = true;
      throw err;
    } finally {
      // The refusal is what the operator must see: an entry that cannot be removed now is left for `store gc`.
      for (const dir of decided ? [] : created) {
        try {
          removeEntry(dir);
        } catch {
          // named by no server: `store gc` removes it
        }
      }
    }
  });
  for (const { servers, store, c } of result.installed) {
    for (const id of servers) await auditInstalled(paths, id, { c, root, ...(c.provenance ? {} : { unsigned: '--allow-unsigned' as const }) }, store, by);
  }
  return result.r;
}
