import path from 'node:path';
import type { LockEntry } from '../../surface/lockfile.js';
import type { WardenLockEntry } from '../../surface/warden-lock.js';
import type { TrustBundle } from './format.js';

// Paths inside the sealed store, as a trust bundle carries them (docs/adr/0029-store-servers-in-bundles.md):
// `store:<entry>/<path inside the entry>`. The entry's name is the same on every machine (the package's name,
// version and tarball sha512 make it); the home it lives in is not. `bundle create` writes every path inside a
// bundled package's entry this way, `bundle apply` rewrites each to this machine's store before anything
// looks at the bundle.

export const STORE_REF_PREFIX = 'store:';

export interface StoreRef {
  entry: string;
  /** The path inside the entry, '' for the entry itself. */
  rel: string;
}

/** Whether a string of a path field is meant as a store reference (it may still be malformed). */
export const isStoreRef = (s: string): boolean => s.startsWith(STORE_REF_PREFIX);

/** The entry and path a store reference names; undefined when it is not one a bundle may carry (an entry name
 *  that is not a store entry's, a path that is not normalized or leads out of the entry). */
export function parseStoreRef(s: string): StoreRef | undefined {
  if (!isStoreRef(s)) return undefined;
  const body = s.slice(STORE_REF_PREFIX.length);
  const slash = body.indexOf('/');
  const entry = slash < 0 ? body : body.slice(0, slash);
  const rel = slash < 0 ? '' : body.slice(slash + 1);
  if (!/^[^./][^/]*$/.test(entry)) return undefined;
  if (slash >= 0 && (rel === '' || rel.split('/').some((seg) => seg === '' || seg === '.' || seg === '..'))) return undefined;
  return { entry, rel };
}

/** `store:<entry>/<rel>` for an absolute path inside one of `entries` of a store at one of `storeDirs` (its
 *  path as the home names it and its real path); undefined for any other path. */
export function toStoreRef(p: string, storeDirs: readonly string[], entries: ReadonlySet<string>): string | undefined {
  for (const dir of storeDirs) {
    if (!p.startsWith(dir + path.sep)) continue;
    const inside = p.slice(dir.length + 1);
    const slash = inside.indexOf('/');
    const entry = slash < 0 ? inside : inside.slice(0, slash);
    if (!entries.has(entry)) continue;
    return `${STORE_REF_PREFIX}${slash < 0 ? entry : `${entry}/${path.posix.normalize(inside.slice(slash + 1))}`}`;
  }
  return undefined;
}

/** The absolute path a (valid) store reference names in the store at `storeDir`. */
export function fromStoreRef(ref: StoreRef, storeDir: string): string {
  return ref.rel === '' ? path.join(storeDir, ref.entry) : path.join(storeDir, ref.entry, ref.rel);
}

/** Where a path field of a bundle is, for messages: "/servers/fs/args/0". */
export type PathMapper = (value: string, at: string) => string;

function mapTools(e: LockEntry, id: string, f: PathMapper): LockEntry {
  return { ...e, target: f(e.target, `/toolsLock/${id}/target`), args: e.args.map((a, i) => f(a, `/toolsLock/${id}/args/${i}`)) };
}

function mapWarden(e: WardenLockEntry, id: string, f: PathMapper): WardenLockEntry {
  return { ...e, artifacts: e.artifacts.map((a, i) => ({ ...a, path: f(a.path, `/wardenLock/${id}/artifacts/${i}/path`) })) };
}

/**
 * The bundle with `f` applied to every field that holds a path: each server's command, args, cwd and modules,
 * each artifact's path, each tools.lock entry's target and args (recorded there, never hashed: surfacelock SPEC
 * §3.1, §5), each warden.lock entry's artifact paths. Everything else is carried over as it is.
 */
export function mapBundlePaths(b: TrustBundle, f: PathMapper): TrustBundle {
  const servers: TrustBundle['servers'] = {};
  for (const [id, s] of Object.entries(b.servers)) {
    const at = `/servers/${id}`;
    const mapped = { ...s, command: f(s.command, `${at}/command`), args: s.args.map((a, i) => f(a, `${at}/args/${i}`)) };
    if (s.cwd !== undefined) mapped.cwd = f(s.cwd, `${at}/cwd`);
    if (s.modules !== undefined) mapped.modules = s.modules.map((m, i) => f(m, `${at}/modules/${i}`));
    Object.defineProperty(servers, id, { value: mapped, enumerable: true, writable: true, configurable: true });
  }
  return {
    ...b,
    servers,
    artifacts: b.artifacts.map((a, i) => ({ ...a, path: f(a.path, `/artifacts/${i}/path`) })),
    tools: new Map([...b.tools].map(([id, e]) => [id, mapTools(e, id, f)])),
    warden: new Map([...b.warden].map(([id, e]) => [id, mapWarden(e, id, f)])),
  };
}

/** Every store reference among the bundle's path fields, with where it is. */
export function storeRefsOf(b: TrustBundle): { value: string; at: string }[] {
  const out: { value: string; at: string }[] = [];
  mapBundlePaths(b, (value, at) => {
    if (isStoreRef(value)) out.push({ value, at });
    return value;
  });
  return out;
}
