import semver from 'semver';

// What the sealed store accepts of an npm lockfile (lockfileVersion 3), whether npm resolved it on this machine
// (`install`, `upgrade`) or a trust bundle's signer wrote it (docs/adr/0043-npm-takes-registry-tarballs-only.md).
// Admission by proof: every package is an exact version of a registry package pinned by its integrity (and, when
// npm resolved it here, taken from that registry's own tarball URL for that name and version); every dependency edge
// is a semver range (or an npm: alias of one) that resolves, as npm resolves it, to a package of this lockfile that
// satisfies it; every package is reached from the entry's one package. Anything else (a git, file, directory or URL
// spec, a dist-tag, a link, a version that is not a version) would make npm fetch, resolve again or prepare what
// this check never saw.

export const MAX_LOCK_PACKAGES = 20_000;
const SHA512 = /^sha512-[A-Za-z0-9+/]{86}==$/;
const SHA1 = /^sha1-[A-Za-z0-9+/]{27}=$/;
/** A key of a lockfile's `packages` other than the root: node_modules/<name>(/node_modules/<name>)*. */
const LOCK_KEY = /^node_modules\/(?:@[^/.][^/]*\/)?[^/.][^/]*(?:\/node_modules\/(?:@[^/.][^/]*\/)?[^/.][^/]*)*$/;
const NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
/** The characters of a semver range. Any other (":", "/", "#", "@") makes npm read a spec as git, file, URL or alias. */
const RANGE_CHARS = /^[0-9A-Za-z+\-*^~<>=|. \t]*$/;
const EDGE_FIELDS = ['dependencies', 'optionalDependencies', 'peerDependencies'] as const;
/** The fields the store's own root package may have (it is written by the warden: one dependency). */
const ROOT_FIELDS = ['name', 'version', 'license', 'dependencies'];

export interface LockRules {
  /** The entry's package: the root's one dependency, at this version, with this integrity. */
  name: string;
  version: string;
  integrity: string;
  /** The registry npm is configured with (ending in "/"): each package's `resolved` must be its tarball URL there.
   *  Undefined for a trust bundle's lockfile, which carries no `resolved` at all. */
  registry?: string;
  /** Whether a package may sit under another name (an npm:<name>@<range> alias); bundles carry none. */
  aliases: boolean;
}

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

/** The tarball URL of name@version on a registry (the path the npm registry serves it at). */
export function registryTarball(registry: string, name: string, version: string): string {
  return `${registry}${name}/-/${name.slice(name.lastIndexOf('/') + 1)}-${version}.tgz`;
}

/** The JSON pointer of a key of `packages`. */
export const packagePointer = (key: string): string => `/packages/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;

/** The name a package is installed under at `key`. */
const nameAt = (key: string): string => key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);

/** A registry spec as npm reads it: a semver range, or with `aliases` npm:<name>@<range>; undefined otherwise. */
function registryRange(spec: unknown, aliases: boolean): { target?: string; range: string } | undefined {
  if (typeof spec !== 'string') return undefined;
  let target: string | undefined;
  let range = spec;
  if (aliases && spec.startsWith('npm:')) {
    const m = /^npm:((?:@[^/@]+\/)?[^/@]+)@(.*)$/.exec(spec);
    if (!m || !NAME.test(m[1] as string)) return undefined;
    [target, range] = [m[1], m[2] as string];
  }
  if (!RANGE_CHARS.test(range) || range.trimStart().startsWith('.') || semver.validRange(range, { loose: true }) === null) return undefined;
  return { ...(target ? { target } : {}), range };
}

/** Where npm finds `dep` for the package at `key`: its own node_modules, then each one above it. */
function resolveEdge(packages: Record<string, unknown>, key: string, dep: string): string | undefined {
  for (let dir = key; ; ) {
    const at = dir === '' ? `node_modules/${dep}` : `${dir}/node_modules/${dep}`;
    if (Object.hasOwn(packages, at)) return at;
    if (dir === '') return undefined;
    const up = dir.lastIndexOf('/node_modules/');
    dir = up < 0 ? '' : dir.slice(0, up);
  }
}

/** What is wrong with one package entry (not its edges), as "<pointer>: <problem>". */
function entryProblem(key: string, e: Record<string, unknown>, rules: LockRules, here: string): string | undefined {
  if ('link' in e) return `${here}/link: the store installs registry packages only, never a link to a directory`;
  if ('hasShrinkwrap' in e) return `${here}/hasShrinkwrap: a package carrying its own npm-shrinkwrap.json makes npm install what that file names, which this lockfile does not show`;
  const name = 'name' in e ? e.name : nameAt(key);
  if (typeof name !== 'string' || !NAME.test(name)) return `${here}/name: expected an npm package name`;
  if (name !== nameAt(key) && !rules.aliases) return `${here}/name: an alias of another package (npm:…); the store installs each package under its own name`;
  if (typeof e.version !== 'string' || semver.valid(e.version) !== e.version) return `${here}/version: ${JSON.stringify(e.version)} is not an exact version (npm would fetch a spec in its place)`;
  if (e.inBundle === true) {
    // Comes inside its bundling parent's tarball, which that parent's integrity pins; npm fetches nothing for it.
    if (!key.includes('/node_modules/')) return `${here}/inBundle: only a package inside another one can come in that one's tarball`;
    if ('resolved' in e) return `${here}/resolved: a bundled package comes in its parent's tarball, from nowhere else`;
    return undefined;
  }
  const integrity = e.integrity;
  if (typeof integrity !== 'string' || !(SHA512.test(integrity) || (rules.registry !== undefined && SHA1.test(integrity)))) {
    return `${here}/integrity: expected ${rules.registry === undefined ? 'a sha512' : 'one sha512 (or legacy sha1)'} integrity that pins the tarball`;
  }
  if (rules.registry === undefined) {
    if ('resolved' in e) return `${here}/resolved: a bundle carries no registry URL (npm takes each package from this machine's registry)`;
  } else {
    const expected = registryTarball(rules.registry, name, e.version);
    if (e.resolved !== expected) return `${here}/resolved: npm would take ${name}@${e.version} from ${JSON.stringify(String(e.resolved).slice(0, 120))}, not from the registry's tarball ${expected}`;
  }
  if (key === `node_modules/${rules.name}` && (name !== rules.name || e.version !== rules.version || integrity !== rules.integrity)) {
    return `${here}: expected ${rules.name}@${rules.version} with the integrity that was verified (${rules.integrity.slice(0, 23)}…)`;
  }
  return undefined;
}

/** What is wrong with the edges of the package at `key`; the packages they lead to are added to `reached`. */
function edgesProblem(packages: Record<string, unknown>, key: string, e: Record<string, unknown>, rules: LockRules, here: string, reached: string[]): string | undefined {
  const meta = isObject(e.peerDependenciesMeta) ? e.peerDependenciesMeta : {};
  for (const field of EDGE_FIELDS) {
    if (!(field in e)) continue;
    const deps = e[field];
    if (!isObject(deps)) return `${here}/${field}: expected an object`;
    for (const [dep, spec] of Object.entries(deps)) {
      const at = `${here}/${field}/${dep.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      const r = registryRange(spec, rules.aliases);
      if (!r) return `${at}: ${JSON.stringify(String(spec).slice(0, 120))} is not a semver range of a registry package (a git, file, URL or dist-tag spec makes npm fetch or resolve it again, outside this lockfile)`;
      if (!NAME.test(dep)) return `${at}: expected an npm package name`;
      const target = resolveEdge(packages, key, dep);
      const optionalPeer = field === 'peerDependencies' && isObject(meta[dep]) && (meta[dep] as Record<string, unknown>).optional === true;
      if (target === undefined) {
        if (optionalPeer) continue;
        return `${at}: no package of the lockfile is installed where npm looks for ${dep}, so npm would resolve it again from the registry`;
      }
      const t = packages[target] as Record<string, unknown>;
      const targetName = 'name' in t ? t.name : nameAt(target);
      if (targetName !== (r.target ?? dep)) return `${at}: npm finds ${String(targetName)} at ${target}, not ${r.target ?? dep}`;
      const any = r.range.trim() === '' || r.range.trim() === '*';
      if (!any && !semver.satisfies(String(t.version), r.range, { loose: true })) return `${at}: ${String(t.version)} at ${target} does not satisfy ${JSON.stringify(r.range)}, so npm would resolve it again from the registry`;
      reached.push(target);
    }
  }
  return undefined;
}

/** What is wrong with a lockfile for the store, as "<pointer>: <problem>" (pointers relative to the lockfile);
 *  undefined when npm can install it taking nothing but registry tarballs pinned by integrity. */
export function lockfileProblem(lock: unknown, rules: LockRules): string | undefined {
  if (!isObject(lock)) return ': expected an object';
  if (lock.lockfileVersion !== 3) return '/lockfileVersion: expected 3';
  const packages = lock.packages;
  if (!isObject(packages)) return '/packages: expected an object';
  const keys = Object.keys(packages);
  if (keys.length > MAX_LOCK_PACKAGES) return `/packages: more than ${MAX_LOCK_PACKAGES} packages`;
  const root = packages[''];
  const deps = isObject(root) ? root.dependencies : undefined;
  if (!isObject(deps) || Object.keys(deps).length !== 1 || deps[rules.name] !== rules.version) return `/packages/: expected the one dependency ${rules.name} at ${rules.version}`;
  const extra = Object.keys(root as object).find((k) => !ROOT_FIELDS.includes(k));
  if (extra !== undefined) return `/packages//${extra}: not a field of a store entry's own package`;
  for (const key of keys) {
    if (key === '') continue;
    const here = packagePointer(key);
    if (!LOCK_KEY.test(key)) return `${here}: not a node_modules path`;
    const e = packages[key];
    if (!isObject(e)) return `${here}: expected an object`;
    const problem = entryProblem(key, e, rules, here);
    if (problem) return problem;
  }
  // Every edge of every package reached from the root, followed as npm follows it; nothing rides along unreached.
  const seen = new Set<string>();
  const queue = [''];
  while (queue.length > 0) {
    const key = queue.pop() as string;
    if (seen.has(key)) continue;
    seen.add(key);
    const problem = edgesProblem(packages, key, packages[key] as Record<string, unknown>, rules, key === '' ? '/packages/' : packagePointer(key), queue);
    if (problem) return problem;
  }
  const stray = keys.find((k) => !seen.has(k) && (packages[k] as Record<string, unknown>).inBundle !== true);
  if (stray !== undefined) return `${packagePointer(stray)}: no dependency of ${rules.name} leads to it, so its tree digest would not cover it`;
  const strayBundled = keys.find((k) => !seen.has(k) && !seen.has(k.slice(0, k.lastIndexOf('/node_modules/'))));
  if (strayBundled !== undefined) return `${packagePointer(strayBundled)}: no dependency of ${rules.name} leads to the package that would bundle it`;
  return undefined;
}
