import fs from 'node:fs';
import path from 'node:path';
import { WardenError } from '../../error.js';
import { verifyNpmAttestations } from '../../provenance/npm-attestations.js';
import type { TrustRoot } from '../../provenance/trust-root.js';
import type { InstallRecord } from '../../store/package-store.js';
import { fetchAttestations, fetchPackument, type Packument } from './registry.js';

// The dependencies npm installed beside a package, read from the lockfile it wrote (each with the integrity npm
// checked its tarball against), and for each whether the registry serves a provenance that verifies for that
// very tarball: "N of M packages with verified provenance", as `npm audit signatures` counts. A dependency
// without provenance is counted, not refused; one whose attestations fail to verify is refused: that is not
// an absence, it is a forgery or a swap.

const CONCURRENCY = 8;

export type Dependency = InstallRecord['dependencies'][number];

interface LockPackage {
  name?: unknown;
  version?: unknown;
  integrity?: unknown;
  resolved?: unknown;
  inBundle?: unknown;
  link?: unknown;
  dependencies?: unknown;
  optionalDependencies?: unknown;
  peerDependencies?: unknown;
}

/** The dependency fields whose packages npm installs (dev dependencies of a dependency never are). */
const DEPENDENCY_FIELDS = ['dependencies', 'optionalDependencies', 'peerDependencies'] as const;

function specsOf(m: Partial<Record<(typeof DEPENDENCY_FIELDS)[number], unknown>>): [string, unknown][] {
  return DEPENDENCY_FIELDS.flatMap((f) => {
    const deps = m[f];
    return deps !== null && typeof deps === 'object' && !Array.isArray(deps) ? Object.entries(deps as Record<string, unknown>) : [];
  });
}

/**
 * Refuses a lockfile npm resolved from the registry's packuments that installs, for the verified package, a
 * dependency its own (signed) package.json does not declare with that very spec: npm reads dependencies from
 * the registry's copy of the manifest, which the registry (or a mirror) can make differ from the tarball's.
 */
export function checkDeclaredDependencies(top: LockPackage, manifest: Partial<Record<(typeof DEPENDENCY_FIELDS)[number], unknown>>, label: string): void {
  const declared = specsOf(manifest);
  for (const [dep, spec] of specsOf(top)) {
    if (!declared.some(([n, s]) => n === dep && s === spec)) {
      const own = declared.filter(([n]) => n === dep).map(([, s]) => String(s));
      throw new WardenError('INSTALL_FAILED', `the registry's copy of ${label}'s manifest makes npm install the dependency ${JSON.stringify(dep)} as ${JSON.stringify(spec)}, but the verified tarball's package.json ${own.length > 0 ? `declares it as ${own.map((s) => JSON.stringify(s)).join(' or ')}` : 'does not declare it'}: the registry answered differently than the package was built. Nothing was installed.`);
    }
  }
}

const MAX_LOCKFILE = 64 * 1024 * 1024;

/** A lockfile npm wrote in `dir` (`file`: package-lock.json, or the one of what it installed), read whole. */
export function readLockFile(dir: string, file = 'package-lock.json'): unknown {
  const lockFile = path.join(dir, file);
  try {
    if (fs.statSync(lockFile).size > MAX_LOCKFILE) throw new Error(`larger than ${MAX_LOCKFILE} bytes`);
    return JSON.parse(fs.readFileSync(lockFile, 'utf8')) as unknown;
  } catch (err) {
    throw new WardenError('INSTALL_FAILED', `npm wrote no readable lockfile at ${lockFile} (${(err as Error).message}); nothing was installed.`);
  }
}

/** The package installed for `name`, and every other package of a lockfile that passed lockfileProblem (bundled
 *  ones excepted: the tarball that bundles them is what its provenance covers), each under the name it is. */
export function readLock(lock: unknown, name: string): { top: LockPackage; deps: Dependency[] } {
  const packages = ((lock as { packages?: Record<string, LockPackage> } | null)?.packages ?? {}) as Record<string, LockPackage>;
  const top = packages[`node_modules/${name}`] ?? {};
  const deps: Dependency[] = [];
  for (const [key, p] of Object.entries(packages)) {
    if (key === '' || key === `node_modules/${name}` || p.inBundle === true) continue;
    // A package installed under an alias (npm:<name>@<range>) sits under the alias; the lock names what it is.
    const depName = typeof p.name === 'string' ? p.name : key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    deps.push({ name: depName, version: String(p.version), integrity: String(p.integrity) });
  }
  deps.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.version < b.version ? -1 : 1));
  return { top, deps };
}

async function provenanceOf(dep: Dependency, root: TrustRoot, packuments: Map<string, Promise<Packument>>): Promise<Dependency> {
  const sha512 = /^sha512-(.+)$/.exec(dep.integrity.split(/\s+/).find((s) => s.startsWith('sha512-')) ?? '');
  if (!sha512) return dep; // an old package pinned by sha1 only: nothing can attest to it
  let pending = packuments.get(dep.name);
  if (!pending) packuments.set(dep.name, (pending = fetchPackument(dep.name)));
  const dist = (await pending).versions.get(dep.version);
  if (!dist?.attestationsUrl) return dep;
  const doc = await fetchAttestations(dep.name, dep.version, dist);
  if (doc === undefined) return dep;
  try {
    const verified = verifyNpmAttestations(doc, { name: dep.name, version: dep.version, sha512hex: Buffer.from(sha512[1] as string, 'base64').toString('hex') }, root);
    return { ...dep, provenance: verified.identity };
  } catch (err) {
    if (err instanceof WardenError && err.code === 'PROVENANCE_MISSING') return dep;
    if (err instanceof WardenError) throw new WardenError(err.code, `dependency ${dep.name}@${dep.version}: ${err.message}`);
    throw err;
  }
}

/** Each dependency with its verified provenance identity, when it has one. */
export async function dependencyProvenance(deps: Dependency[], root: TrustRoot): Promise<Dependency[]> {
  const packuments = new Map<string, Promise<Packument>>();
  const out: Dependency[] = new Array(deps.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < deps.length) {
      const i = next++;
      out[i] = await provenanceOf(deps[i] as Dependency, root, packuments);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, deps.length) }, worker));
  return out;
}
