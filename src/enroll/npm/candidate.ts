import fs from 'node:fs';
import { WardenError, errnoOf } from '../../error.js';
import { escaped } from '../../escape.js';
import { hasProvenance, sha512Of, verifyNpmAttestations, type VerifiedProvenance } from '../../provenance/npm-attestations.js';
import type { TrustRoot } from '../../provenance/trust-root.js';
import { prepareNpm } from './npm-cli.js';
import { ATTESTATIONS_LIMIT, fetchAttestations, fetchPackument, fetchTarball, registryUrl, resolveVersion, type Packument } from './registry.js';
import { binsOf, manifestOfTarball, type TarballManifest } from './tarball.js';

// A package version about to be trusted: resolved to one exact version, its tarball fetched and checked
// against the registry's sha512, its attestations verified against that very tarball. Nothing is written
// anywhere while a candidate is made: install, upgrade and outdated all start here.

const PACKAGE_SPEC = /^((?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*)(?:@(.+))?$/i;

export interface Candidate {
  name: string;
  version: string;
  /** dist.integrity, which the tarball was checked against ("sha512-<base64>"). */
  integrity: string;
  sha512hex: string;
  tarball: Buffer;
  manifest: TarballManifest;
  bins: Record<string, string>;
  registry: string;
  /** Who built it, when it has provenance (verified); undefined when the registry serves none. */
  provenance?: VerifiedProvenance;
  /** Where the attestations came from: the registry's endpoint, a file, or nowhere. */
  attestationsFrom: 'registry' | 'file' | 'none';
}

/** Splits an npm spec into name and version part; only registry specs are accepted. */
export function parseSpec(spec: string): { name: string; wanted?: string } {
  const m = PACKAGE_SPEC.exec(spec);
  if (!m || /^(file|git|git\+|https?|github):/i.test(spec) || spec.includes('://')) {
    throw new WardenError('USAGE', `'${spec}' is not an npm package name with an optional version, tag or range (name, name@1.2.3, @scope/name@^1): install takes packages from the registry only.`);
  }
  return { name: m[1] as string, ...(m[2] ? { wanted: m[2] } : {}) };
}

function readAttestationsFile(file: string): unknown {
  let bytes: Buffer;
  try {
    const st = fs.statSync(file);
    if (st.size > ATTESTATIONS_LIMIT) throw new WardenError('USAGE', `--attestations ${file} is ${st.size} bytes, more than the ${ATTESTATIONS_LIMIT} the warden reads.`);
    bytes = fs.readFileSync(file);
  } catch (err) {
    if (err instanceof WardenError) throw err;
    throw new WardenError('USAGE', `--attestations ${file} cannot be read (${errnoOf(err) ?? String(err)}). Give the JSON the registry serves at /-/npm/v1/attestations/<name>@<version>.`);
  }
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new WardenError('USAGE', `--attestations ${file} is not JSON. Give the JSON the registry serves at /-/npm/v1/attestations/<name>@<version>.`);
  }
}

/** Fetches and verifies `name` at the version `wanted` resolves to (or at an exact version). `integrity`: the
 *  sha512 the caller already pins (a trust bundle's), which the registry must name before anything is fetched. */
export async function makeCandidate(name: string, wanted: string | undefined, root: TrustRoot, opts: { attestationsFile?: string; packument?: Packument; integrity?: string } = {}): Promise<Candidate> {
  prepareNpm(); // npm runs once the candidate is verified: its version is checked meanwhile
  const registry = await registryUrl();
  const packument = opts.packument ?? (await fetchPackument(name));
  const version = resolveVersion(packument, wanted);
  const dist = packument.versions.get(version);
  if (!dist) throw new WardenError('REGISTRY_FAILED', `the registry lists no tarball for ${name}@${version}.`);
  const label = `${name}@${version}`;
  if (!/^sha512-/.test(dist.integrity)) {
    throw new WardenError('INTEGRITY_MISMATCH', `the registry gives ${label} no sha512 integrity ('${escaped(dist.integrity.slice(0, 20))}…'), so its tarball cannot be checked; nothing was installed.`);
  }
  if (opts.integrity !== undefined && dist.integrity !== opts.integrity) {
    throw new WardenError('INTEGRITY_MISMATCH', `the registry names ${escaped(dist.integrity.slice(0, 23))}… as the sha512 of ${label}, not ${opts.integrity.slice(0, 23)}… as pinned: it serves other bytes under that version than were reviewed. Nothing was installed.`);
  }
  const tarball = await fetchTarball(name, version, dist);
  const { integrity, hex } = sha512Of(tarball);
  if (integrity !== dist.integrity) {
    throw new WardenError('INTEGRITY_MISMATCH', `the tarball the registry served for ${label} does not have the sha512 its package document names (${integrity.slice(0, 23)}… served, ${escaped(dist.integrity.slice(0, 23))}… named): it was altered on the way or on the registry. Nothing was installed.`);
  }
  const doc = opts.attestationsFile ? readAttestationsFile(opts.attestationsFile) : await fetchAttestations(name, version, dist);
  const attestationsFrom = opts.attestationsFile ? 'file' : doc === undefined ? 'none' : 'registry';
  // A document with attestations but no SLSA provenance among them says nothing about who built the package.
  const provenance = doc !== undefined && (hasProvenance(doc) || opts.attestationsFile) ? verifyNpmAttestations(doc, { name, version, sha512hex: hex }, root) : undefined;
  const manifest = await manifestOfTarball(tarball, label);
  if (manifest.name !== name || manifest.version !== version) {
    throw new WardenError('INSTALL_FAILED', `the tarball of ${label} says it is ${escaped(String(manifest.name))}@${escaped(String(manifest.version))}; nothing was installed.`);
  }
  return { name, version, integrity, sha512hex: hex, tarball, manifest, bins: binsOf(manifest, name), registry, ...(provenance ? { provenance } : {}), attestationsFrom };
}
