import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { entries, pack, tarball as tarballOf } from './npm-pack.mjs';
import { startLocalRegistry, type LocalRegistry } from './registry.js';
import { type AttestationsJson, type Identity, type NpmKeysJson, PREDICATE_SLSA_PROVENANCE_V1, type TestSigstore, type TrustedRootJson, createTestPki } from './sigstore-pki.js';
import { ROOT } from './warden.js';

// The npm registry stand-in (registry.ts) serving fixture packages published with provenance, for tests of
// `install` (and of upgrade and outdated). One local test sigstore instance (sigstore-pki.ts) signs what is
// published: its trusted root and npm keys are what `writeTrustRoot` puts into a test home as trust-root.json,
// so the warden verifies these packages exactly as it verifies real ones, offline. `publish` packs a fixture
// package (test/fixtures/packages/), signs its npm publish attestation and SLSA provenance for the sha512 of
// those very bytes, and writes it into the registry's catalog, which the registry reads on every request: a
// version published mid-test is served at once. Each option of `publish` makes one thing a real registry, CI or
// attacker could do differently (another signer, no attestations, an altered statement, swapped bytes).

export const FIXTURE_PACKAGES = path.join(ROOT, 'test/fixtures/packages');
export const NPM_PROVENANCE_FIXTURES = path.join(ROOT, 'test/fixtures/sigstore/npm-provenance');
export const DEMO_SERVER = '@mcp-warden-test/demo-server';
export const DEMO_DEP = '@mcp-warden-test/demo-dep';
export const NO_BIN = '@mcp-warden-test/no-bin';

/** The CI identity that publishes `name@version` by default: the release workflow of its own repository, at the
 *  tag of the version, with a commit derived from both. */
export function identityFor(name: string, version: string): Identity {
  return {
    repository: `https://github.com/mcp-warden-test/${name.split('/').pop() as string}`,
    workflow: '.github/workflows/release.yml',
    ref: `refs/tags/v${version}`,
    commit: crypto.createHash('sha1').update(`${name}@${version}`).digest('hex'),
  };
}

/** trust-root.json as the warden reads it from a home (src/provenance/trust-root.ts). */
export interface TrustRootFile {
  date: string;
  source: string;
  trustedRoot: TrustedRootJson;
  npmKeys: NpmKeysJson;
}

/** A test PKI's trust material as a home's trust-root.json, dated `date` (when it was "taken"). */
export function trustRootOf(pki: Pick<TestSigstore, 'trustedRoot' | 'npmKeys'>, date: Date): TrustRootFile {
  return { date: date.toISOString(), source: 'mcp-warden test sigstore PKI (test/helpers/sigstore-pki.ts)', trustedRoot: pki.trustedRoot, npmKeys: pki.npmKeys };
}

/** Writes `root` as HOME/trust-root.json (owner-only, as the warden requires), creating the home (0700). */
export function writeTrustRoot(home: string, root: TrustRootFile): void {
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  const file = path.join(home, 'trust-root.json');
  fs.writeFileSync(file, JSON.stringify(root, null, 2) + '\n', { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}

export interface PublishOptions {
  /** Who signs the provenance (default identityFor(name, version)). */
  identity?: Identity;
  /**
   * 'signed' (default): a publish attestation and a SLSA provenance for the tarball published; 'none': the packument
   * names no attestations (a package published without provenance); 'tampered': signed, then the provenance's
   * statement altered (its predicate names another source repository), so its signature no longer covers it; or
   * the registry's JSON itself.
   */
  attestations?: 'signed' | 'none' | 'tampered' | AttestationsJson;
  /** Serve this file as the attestations, byte for byte (e.g. a real registry answer). */
  attestationsFile?: string;
  /** The sigstore instance that signs (default: the registry's, whose trust root writeTrustRoot writes). */
  pki?: TestSigstore;
  /** When the attestations are signed (default now). */
  signedAt?: Date;
  /** The package directory to pack (default: the fixture whose package.json is name@version). Whatever is
   *  published, its package.json should name name@version, as a real registry enforces. */
  from?: string;
  /** The tarball, as bytes or a file (instead of packing `from`). */
  tarball?: Buffer | string;
  /**
   * Serve other bytes than the ones signed (the package with one file added): 'recomputed' also makes the
   * packument's dist.integrity name them (a registry or mirror that swapped the package), 'stale' keeps the
   * integrity of the signed bytes (bytes swapped on the way).
   */
  swapTarball?: 'recomputed' | 'stale';
  /** dist-tags of the package from this publish on, until another publish gives others (default: latest = the
   *  highest version). */
  distTags?: Record<string, string>;
  /** Fields laid over the tarball's package.json in the packument the registry serves (npm installs from that copy):
   *  a registry or mirror whose manifest differs from the signed tarball's ("manifest confusion"). */
  packumentManifest?: Record<string, unknown>;
  /** The packument's dist.integrity, whatever the bytes are (a registry's own text). */
  integrity?: string;
  /** dist.tarball as the registry tells npm only (recognised by its User-Agent): the warden's own fetches get the
   *  genuine tarball URL, npm this one (e.g. a git+file:// URL: the same version, other code). */
  npmTarball?: string;
}

export interface Published {
  name: string;
  version: string;
  /** The bytes signed (and served, unless swapped). */
  tarball: Buffer;
  sha512hex: string;
  integrity: string;
  /** What was served as attestations (undefined for 'none'). */
  attestations?: unknown;
  /** The file the attestations are served from (for --attestations FILE), undefined for 'none'. */
  attestationsFile?: string;
  /** The bytes served instead of `tarball` when swapped. */
  swapped?: Buffer;
}

export interface ProvenanceRegistry {
  url: string;
  registry: LocalRegistry;
  /** The sigstore instance that signs by default, and whose trust root `trustRoot` is. */
  pki: TestSigstore;
  /** trust-root.json for a home: this registry's PKI, dated when the registry started. */
  trustRoot: TrustRootFile;
  /** Environment for `cli()` and npm: npm (and so the warden) pointed at this registry only. */
  env: NodeJS.ProcessEnv;
  publish(name: string, version: string, options?: PublishOptions): Published;
  /** Removes a version (or the whole package) from the catalog. */
  unpublish(name: string, version?: string): void;
  /** Writes this registry's trust root into `home` (writeTrustRoot). */
  trustHome(home: string): void;
  /** The requests served so far, one "METHOD /path STATUS" each. */
  requests(): string[];
  close(): Promise<void>;
}

interface CatalogVersion {
  tarball: string;
  attestations?: string;
  integrity?: string;
  serveTarball?: string;
  manifest?: Record<string, unknown>;
  npmTarball?: string;
}
type Catalog = Record<string, { 'dist-tags'?: Record<string, string>; versions: Record<string, CatalogVersion> }>;

const sha512 = (bytes: Buffer): { hex: string; integrity: string } => {
  const d = crypto.createHash('sha512').update(bytes).digest();
  return { hex: d.toString('hex'), integrity: `sha512-${d.toString('base64')}` };
};

/** The fixture directory of name@version under test/fixtures/packages/. */
export function fixtureDir(name: string, version: string): string {
  for (const entry of fs.readdirSync(FIXTURE_PACKAGES)) {
    const manifest = path.join(FIXTURE_PACKAGES, entry, 'package.json');
    if (!fs.existsSync(manifest)) continue;
    const m = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
    if (m.name === name && m.version === version) return path.join(FIXTURE_PACKAGES, entry);
  }
  throw new Error(`no fixture package ${name}@${version} in ${FIXTURE_PACKAGES}`);
}

/** Packs a fixture package the way npm pack does (deterministic: the same files give the same bytes). */
export function packFixture(name: string, version: string): Buffer {
  return pack(fixtureDir(name, version));
}

/** The same package with one file added: other bytes, same name and version. */
function swappedOf(tgz: Buffer): Buffer {
  const files = entries(tgz)
    .filter((e) => e.type === '0')
    .map((e) => ({ rel: e.name.slice(e.name.indexOf('/') + 1), data: e.data, mode: 0o644 }));
  return tarballOf([...files, { rel: 'swapped.js', data: "// not what was built: added after the provenance was signed\nprocess.exit(1);\n" }]);
}

/** A copy of signed attestations whose provenance statement says another source repository than was signed. */
function tampered(a: AttestationsJson): AttestationsJson {
  return {
    attestations: a.attestations.map((x) => {
      if (x.predicateType !== PREDICATE_SLSA_PROVENANCE_V1) return x;
      const statement = JSON.parse(Buffer.from(x.bundle.dsseEnvelope.payload, 'base64').toString('utf8')) as { predicate: { buildDefinition: { externalParameters: { workflow: { repository: string } } } } };
      statement.predicate.buildDefinition.externalParameters.workflow.repository = 'https://github.com/mallory/demo-server';
      return { ...x, bundle: { ...x.bundle, dsseEnvelope: { ...x.bundle.dsseEnvelope, payload: Buffer.from(JSON.stringify(statement)).toString('base64') } } };
    }),
  };
}

/**
 * Starts the registry stand-in in `dir` (its catalog, npm config, cache and log live there) with a fresh test
 * PKI, and publishes, signed by their default identities: demo-dep 1.0.0, demo-server 1.0.0 and no-bin 1.0.0
 * (demo-server 1.1.0 is left for a test to publish). `trustRootDate` dates the trust root (default now).
 */
export async function startProvenanceRegistry(dir: string, options: { trustRootDate?: Date; publishFixtures?: boolean } = {}): Promise<ProvenanceRegistry> {
  const pki = createTestPki();
  const trustRoot = trustRootOf(pki, options.trustRootDate ?? new Date());
  const files = path.join(dir, 'catalog');
  fs.mkdirSync(files, { recursive: true });
  const catalogFile = path.join(files, 'catalog.json');
  let catalog: Catalog = {};
  let serial = 0;
  const save = (): void => {
    const tmp = `${catalogFile}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(catalog, null, 2));
    fs.renameSync(tmp, catalogFile); // the registry reads it on every request: never half-written
  };
  save();
  const registry = await startLocalRegistry(dir, { catalog: catalogFile });

  const writeFile = (stem: string, ext: string, data: Buffer | string): string => {
    const file = path.join(files, `${stem}.${++serial}.${ext}`);
    fs.writeFileSync(file, data);
    return file;
  };

  function publish(name: string, version: string, o: PublishOptions = {}): Published {
    const tgz = o.tarball === undefined ? pack(o.from ?? fixtureDir(name, version)) : Buffer.isBuffer(o.tarball) ? o.tarball : fs.readFileSync(o.tarball);
    const { hex, integrity } = sha512(tgz);
    const stem = `${name.replace('/', '+')}@${version}`;
    const entry: CatalogVersion = { tarball: writeFile(stem, 'tgz', tgz) };
    const published: Published = { name, version, tarball: tgz, sha512hex: hex, integrity };

    let attestations: unknown;
    if (o.attestationsFile !== undefined) {
      attestations = JSON.parse(fs.readFileSync(o.attestationsFile, 'utf8'));
      entry.attestations = o.attestationsFile;
    } else if (o.attestations !== 'none') {
      const signer = o.pki ?? pki;
      const made = typeof o.attestations === 'object' ? o.attestations : signer.attestations({ name, version, sha512hex: hex }, o.identity ?? identityFor(name, version), o.signedAt ? { signedAt: o.signedAt } : {});
      attestations = o.attestations === 'tampered' ? tampered(made) : made;
      entry.attestations = writeFile(stem, 'attestations.json', JSON.stringify(attestations));
    }
    if (entry.attestations) Object.assign(published, { attestations, attestationsFile: entry.attestations });

    if (o.swapTarball) {
      const swapped = swappedOf(tgz);
      entry.serveTarball = writeFile(`${stem}-swapped`, 'tgz', swapped);
      if (o.swapTarball === 'recomputed') entry.integrity = sha512(swapped).integrity;
      published.swapped = swapped;
    }
    if (o.packumentManifest) entry.manifest = o.packumentManifest;
    if (o.integrity !== undefined) entry.integrity = o.integrity;
    if (o.npmTarball !== undefined) entry.npmTarball = o.npmTarball;
    const pkg = catalog[name] ?? { versions: {} };
    pkg.versions[version] = entry;
    if (o.distTags) pkg['dist-tags'] = o.distTags;
    catalog = { ...catalog, [name]: pkg };
    save();
    return published;
  }

  function unpublish(name: string, version?: string): void {
    const pkg = catalog[name];
    if (pkg && version !== undefined) delete pkg.versions[version];
    if (pkg && (version === undefined || Object.keys(pkg.versions).length === 0)) delete catalog[name];
    save();
  }

  if (options.publishFixtures !== false) {
    publish(DEMO_DEP, '1.0.0');
    publish(DEMO_SERVER, '1.0.0');
    publish(NO_BIN, '1.0.0');
  }
  return {
    url: registry.url,
    registry,
    pki,
    trustRoot,
    env: registry.npmEnv(),
    publish,
    unpublish,
    trustHome: (home) => writeTrustRoot(home, trustRoot),
    requests: () => registry.requests(),
    close: () => registry.close(),
  };
}
