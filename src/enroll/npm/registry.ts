import semver from 'semver';
import { WardenError } from '../../error.js';

// The npm registry, as npm is configured to reach it (`npm config get registry`: .npmrc, npm_config_registry),
// read with plain HTTP(S) GETs: the packument, a tarball, the attestations endpoint. Everything it sends is
// hostile input: each answer is bounded in size and time, and only the fields used are read, with their types
// checked. Authenticated registries are not supported yet (docs/guide.md says so).

const LIMITS = { packument: 64 * 1024 * 1024, tarball: 256 * 1024 * 1024, attestations: 8 * 1024 * 1024 };
const TIMEOUT_MS = 120_000;

export interface Dist {
  tarball: string;
  integrity: string;
  /** The attestations endpoint named in the packument, when the registry serves provenance for the version. */
  attestationsUrl?: string;
}

export interface Packument {
  name: string;
  distTags: Record<string, string>;
  versions: Map<string, Dist>;
}

let configured: string | undefined;

/** The registry npm is configured with, ending in "/". */
export async function registryUrl(): Promise<string> {
  if (configured) return configured;
  const { execa } = await import('execa');
  const r = await execa('npm', ['config', 'get', 'registry'], { reject: false, timeout: 60_000, stdin: 'ignore' });
  const url = `${r.stdout}`.trim();
  if (r.exitCode !== 0 || !/^https?:\/\//.test(url)) {
    throw new WardenError('REGISTRY_FAILED', `could not ask npm which registry it uses (npm config get registry: ${r.exitCode !== 0 ? `exit ${r.exitCode}` : `'${url}'`}). Check that npm is installed and configured.`);
  }
  configured = url.endsWith('/') ? url : `${url}/`;
  return configured;
}

/** GETs a URL with a size bound; undefined for a 404 when `missingOk`. */
export async function getBounded(url: string, max: number, what: string, missingOk = false, accept = 'application/json, application/octet-stream;q=0.9'): Promise<Buffer | undefined> {
  if (!/^https?:\/\//.test(url)) throw new WardenError('REGISTRY_FAILED', `the registry named ${what} at '${url}', which is not an http(s) URL; nothing was installed.`);
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept }, redirect: 'follow', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    throw new WardenError('REGISTRY_FAILED', `could not fetch ${what} from ${url} (${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}). Check the network and npm's registry setting.`);
  }
  if (res.status === 404 && missingOk) return undefined;
  if (!res.ok) throw new WardenError('REGISTRY_FAILED', `the registry answered ${res.status} for ${what} (${url}); nothing was installed.`);
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > max) throw new WardenError('REGISTRY_FAILED', `${what} is ${declared} bytes, more than the ${max} the warden reads; nothing was installed.`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += (chunk as Uint8Array).length;
    if (size > max) throw new WardenError('REGISTRY_FAILED', `${what} is more than ${max} bytes; the warden stopped reading it and installed nothing.`);
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return Buffer.concat(chunks);
}

function parseJson(bytes: Buffer, what: string): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new WardenError('REGISTRY_FAILED', `${what} from the registry is not JSON; nothing was installed.`);
  }
}

/** The packument of `name` (only dist-tags and each version's dist are kept). */
export async function fetchPackument(name: string): Promise<Packument> {
  const base = await registryUrl();
  const url = `${base}${name.replace('/', '%2f')}`;
  // The abbreviated document (npm's own install format) keeps each version's dist, attestations included.
  const body = await getBounded(url, LIMITS.packument, `the package document of ${name}`, true, 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8');
  if (!body) throw new WardenError('REGISTRY_FAILED', `the registry ${base} has no package named ${name}. Check the spelling, or npm's registry setting.`);
  const doc = parseJson(body, `the package document of ${name}`) as { name?: unknown; 'dist-tags'?: unknown; versions?: unknown };
  if (doc.name !== name || typeof doc.versions !== 'object' || doc.versions === null) {
    throw new WardenError('REGISTRY_FAILED', `the registry's document for ${name} names ${JSON.stringify(doc.name)} or has no versions; nothing was installed.`);
  }
  const versions = new Map<string, Dist>();
  for (const [v, manifest] of Object.entries(doc.versions as Record<string, unknown>)) {
    const dist = (manifest as { dist?: { tarball?: unknown; integrity?: unknown; attestations?: { url?: unknown } } } | null)?.dist;
    if (!semver.valid(v) || typeof dist?.tarball !== 'string' || typeof dist.integrity !== 'string') continue;
    versions.set(v, { tarball: dist.tarball, integrity: dist.integrity, ...(typeof dist.attestations?.url === 'string' ? { attestationsUrl: dist.attestations.url } : {}) });
  }
  const tags = typeof doc['dist-tags'] === 'object' && doc['dist-tags'] !== null ? Object.fromEntries(Object.entries(doc['dist-tags']).filter(([, v]) => typeof v === 'string')) : {};
  return { name, distTags: tags as Record<string, string>, versions };
}

/** One exact version for a spec's version part: a version, a dist-tag, or a range (highest match). */
export function resolveVersion(p: Packument, wanted: string | undefined): string {
  const want = wanted ?? 'latest';
  const exact = semver.valid(want) ? want : p.distTags[want] ?? semver.maxSatisfying([...p.versions.keys()], want) ?? undefined;
  if (!exact || !p.versions.has(exact)) {
    throw new WardenError('REGISTRY_FAILED', `the registry has no version of ${p.name} matching '${want}' (newest: ${p.distTags.latest ?? 'none'}).`);
  }
  return exact;
}

export async function fetchTarball(name: string, version: string, dist: Dist): Promise<Buffer> {
  return (await getBounded(dist.tarball, LIMITS.tarball, `the tarball of ${name}@${version}`)) as Buffer;
}

/** The registry's attestations for a version, or undefined when it serves none. */
export async function fetchAttestations(name: string, version: string, dist: Dist): Promise<unknown> {
  if (!dist.attestationsUrl) return undefined;
  const body = await getBounded(dist.attestationsUrl, LIMITS.attestations, `the attestations of ${name}@${version}`, true);
  return body ? parseJson(body, `the attestations of ${name}@${version}`) : undefined;
}

export const ATTESTATIONS_LIMIT = LIMITS.attestations;
