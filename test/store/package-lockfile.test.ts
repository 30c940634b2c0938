import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lockfileProblem, registryTarball, type LockRules } from '../../src/store/package-lockfile.js';
import { member, type LockfilePackageJson, type PackageLockJson } from '../helpers/json-docs.js';

// The store's lockfile rules (docs/adr/0043) admit a lockfile only as a whole: every version exact, every package
// from its registry tarball (or, in a bundle, from nowhere named), every edge a semver range satisfied inside the
// lockfile. Generated near-misses of a lockfile that passes — one field changed — must each be refused.

const REGISTRY = 'https://registry.example.test/';
const sha = (c: string): string => `sha512-${c.repeat(86)}==`;
const TOP = { name: '@acme/server', version: '1.2.3', integrity: sha('A') };

/** A lockfile npm could have written: the server, a hoisted dependency, a nested one under another version. */
function good(withResolved: boolean): PackageLockJson {
  const at = (name: string, version: string, integrity: string, rest: Record<string, unknown> = {}): LockfilePackageJson => ({ version, ...(withResolved ? { resolved: registryTarball(REGISTRY, name, version) } : {}), integrity, ...rest });
  return {
    lockfileVersion: 3,
    packages: {
      '': { name: 'mcp-warden-store-entry', dependencies: { [TOP.name]: TOP.version } },
      [`node_modules/${TOP.name}`]: at(TOP.name, TOP.version, TOP.integrity, { dependencies: { dep: '^2.0.0', other: '~1.0.0' }, peerDependencies: { maybe: '*' }, peerDependenciesMeta: { maybe: { optional: true } } }),
      'node_modules/dep': at('dep', '2.1.0', sha('B'), { dependencies: { other: '>=3 <4' } }),
      'node_modules/dep/node_modules/other': at('other', '3.0.1', sha('C')),
      'node_modules/other': at('other', '1.0.4', sha('D')),
    },
  };
}

/** The dependencies of the package at `key` of `lock`, which good() gives it. */
function dependenciesOf(lock: PackageLockJson, key: string): Record<string, string> {
  const deps = member(lock.packages, key).dependencies;
  if (!deps) throw new Error(`good() gives ${key} no dependencies`);
  return deps;
}

const INSTALL: LockRules = { ...TOP, registry: REGISTRY, aliases: true };
const BUNDLE: LockRules = { ...TOP, aliases: false };

/** Specs that are not a registry semver range to npm: each makes it fetch, resolve again, or read a path. */
const notARange = fc.oneof(
  fc.constantFrom('latest', 'next', 'beta', 'github:acme/dep#' + 'a'.repeat(40), 'acme/dep', 'git+file:///tmp/dep', 'git+https://example.test/dep.git', 'git://example.test/dep', 'file:../dep', '../dep', './dep', 'link:../dep', 'https://example.test/dep-2.1.0.tgz', 'http://127.0.0.1/dep.tgz', 'npm:dep@latest', 'npm:dep', 'workspace:*', '~/dep', '/tmp/dep', 'dep@^2.0.0', '^2.0.0 #x', 'git+ssh://git@github.com/a/b.git'),
  fc.tuple(fc.constantFrom('^2.0.0', '2.1.0', '*'), fc.constantFrom(':', '/', '#', '@', '\\')).map(([r, c]) => `${r}${c}`),
);

/** Versions that are not exact versions: npm would read them as specs. */
const notAVersion = fc.constantFrom('latest', '^2.1.0', '2.1', 'v2.1.0', '2.1.0+build', ' 2.1.0', 'git+file:///tmp/dep#' + 'a'.repeat(40), 'https://example.test/dep.tgz', 'file:../dep', '');

const KEYS = ['node_modules/dep', 'node_modules/dep/node_modules/other', 'node_modules/other', `node_modules/${TOP.name}`];

describe('the store lockfile rules', () => {
  it('admit the lockfile as npm wrote it here, and as a bundle carries it', () => {
    expect(lockfileProblem(good(true), INSTALL)).toBeUndefined();
    expect(lockfileProblem(good(false), BUNDLE)).toBeUndefined();
  });

  it('refuse any edge whose spec is not a semver range, in any package, in either form', () => {
    fc.assert(
      fc.property(notARange, fc.constantFrom(...KEYS.slice(0, 1), `node_modules/${TOP.name}`), fc.boolean(), (spec, key, installed) => {
        const lock = good(installed);
        const e = member(lock.packages, key);
        e.dependencies = { ...(e.dependencies ?? {}), other: spec };
        expect(lockfileProblem(lock, installed ? INSTALL : BUNDLE)).toMatch(/is not a semver range of a registry package|no package of the lockfile|does not satisfy/);
      }),
    );
  });

  it('refuse any version that is not exact, for any package', () => {
    fc.assert(
      fc.property(notAVersion, fc.constantFrom(...KEYS), fc.boolean(), (version, key, installed) => {
        const lock = good(installed);
        member(lock.packages, key).version = version;
        expect(lockfileProblem(lock, installed ? INSTALL : BUNDLE)).toBeDefined();
      }),
    );
  });

  it('refuse a resolved URL other than the registry tarball of that name and version, the top package included', () => {
    fc.assert(
      fc.property(fc.constantFrom(...KEYS), fc.integer({ min: 0, max: 200 }), fc.constantFrom('git+', 'x', '/', '?a=1', '#sha', ''), (key, at, insert) => {
        const lock = good(true);
        const url = member(lock.packages, key).resolved;
        if (url === undefined) throw new Error(`good(true) has no resolved URL at ${key}`);
        const i = at % (url.length + 1);
        const changed = insert === '' ? url.slice(0, i) + url.slice(i + 1) : url.slice(0, i) + insert + url.slice(i);
        fc.pre(changed !== url);
        member(lock.packages, key).resolved = changed;
        expect(lockfileProblem(lock, INSTALL)).toMatch(/\/resolved: npm would take/);
      }),
    );
  });

  it('refuse an edge that resolves to a version outside its range, or to nothing (npm would resolve it again)', () => {
    const lock = good(true);
    dependenciesOf(lock, 'node_modules/dep').other = '^1.0.0'; // finds the nested 3.0.1 first
    expect(lockfileProblem(lock, INSTALL)).toMatch(/does not satisfy/);
    const missing = good(false);
    delete missing.packages['node_modules/other'];
    expect(lockfileProblem(missing, BUNDLE)).toMatch(/no package of the lockfile is installed where npm looks for other/);
  });

  it('refuse a resolved URL, a link or a shrinkwrap in a bundle, and an alias where none is allowed', () => {
    const withUrl = good(false);
    member(withUrl.packages, 'node_modules/other').resolved = registryTarball(REGISTRY, 'other', '1.0.4');
    expect(lockfileProblem(withUrl, BUNDLE)).toMatch(/a bundle carries no registry URL/);
    for (const field of ['link', 'hasShrinkwrap']) {
      const lock = good(false);
      member(lock.packages, 'node_modules/other')[field] = true;
      expect(lockfileProblem(lock, BUNDLE)).toContain(`/${field}:`);
    }
    const aliased = good(false);
    member(aliased.packages, 'node_modules/other').name = 'evil';
    expect(lockfileProblem(aliased, BUNDLE)).toMatch(/an alias of another package/);
  });

  it('admit an npm: alias of a registry range for install only when the package there is the one aliased', () => {
    const lock = good(true);
    dependenciesOf(lock, `node_modules/${TOP.name}`).other = 'npm:real@^1.0.0';
    lock.packages['node_modules/other'] = { ...lock.packages['node_modules/other'], name: 'real', resolved: registryTarball(REGISTRY, 'real', '1.0.4') };
    expect(lockfileProblem(lock, INSTALL)).toBeUndefined();
    lock.packages['node_modules/other'] = { ...lock.packages['node_modules/other'], name: 'fake', resolved: registryTarball(REGISTRY, 'fake', '1.0.4') };
    expect(lockfileProblem(lock, INSTALL)).toMatch(/npm finds fake at node_modules\/other, not real/);
  });
});
