import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import * as v from 'valibot';
import { DEFAULT_MIRROR_URL, initTUF } from '@sigstore/tuf';
import { WardenError } from '../error.js';
import { JsonReadError, readJson, toPlain } from '../protocol/json/reader.js';
import { explainIssue } from '../schema/issues.js';
import { npmKeysSchema, openTrustRoot, trustedRootSchema, type TrustRootData } from './trust-root.js';

// `trust-root update` online: sigstore's TUF client (@sigstore/tuf) refreshes the TUF metadata of the public-good
// repository into a cache and hands out its verified targets, trusted_root.json and the npm registry's keys.json.
// The client starts from the TUF root embedded in @sigstore/tuf (seeds.json), which may have expired: it walks
// the signed rotations (N+1.root.json, N+2…) from there and refuses only a *final* root that is expired, so an
// old seed does not block an update; it needs the network, which is why verification never uses it
// (docs/adr/0017-offline-provenance.md). The cache keeps the newest root reached for the next update.

export const TUF_MIRROR = DEFAULT_MIRROR_URL;
/** Per request; the client's own default is 5 s. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Retries of a failed request (make-fetch-happen's): 250 ms, then 500 ms. */
const RETRY = { retries: 2, factor: 2, minTimeout: 250, maxTimeout: 2_000 };
/** The whole refresh: the client takes no AbortSignal, so this bounds it from outside. */
const DEADLINE_MS = 60_000;
const MAX_TARGET = 4 * 1024 * 1024;

const AIR_GAPPED = 'On an air-gapped machine, bring trusted_root.json (and registry.npmjs.org/keys.json) from one that can reach it and run: mcp-warden trust-root update --from FILE';

/** Why a fetch failed, in one line: each message of the cause chain once. */
function reasonOf(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) if (!parts.includes(e.message)) parts.push(e.message);
  return parts.join(': ') || String(err);
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ERR_SOCKET_TIMEOUT']);

/** The fetch failure in the cause chain, if the repository was not reached (DNS, refused, reset, timed out). */
function unreachable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (e.name === 'FetchError' || (typeof code === 'string' && NETWORK_CODES.has(code))) return true;
  }
  return false;
}

function httpStatus(err: unknown): number | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const status = (e as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number') return status;
  }
  return undefined;
}

function failed(mirror: string, err: unknown): WardenError {
  // A target that does not make a trust root is the repository's failure here, not the operator's file.
  if (err instanceof WardenError) return err.code === 'TRUST_ROOT_INVALID' ? new WardenError('TRUST_ROOT_UPDATE_FAILED', `${err.message.replace(/ Import a good one with: .*$/, '')} Nothing was written.`) : err;
  const status = httpStatus(err);
  if (unreachable(err) || status !== undefined) {
    const what = status !== undefined ? `it answered HTTP ${status}` : reasonOf(err);
    return new WardenError('TRUST_ROOT_UPDATE_FAILED', `could not reach the TUF repository ${mirror} (${what}); nothing was written. ${AIR_GAPPED}`);
  }
  return new WardenError('TRUST_ROOT_UPDATE_FAILED', `the TUF repository ${mirror} was reached but its metadata did not verify (${reasonOf(err)}); nothing was written. Try again later. ${AIR_GAPPED}`);
}

/** The seed TUF root of the public-good repository, for a mirror of it (@sigstore/tuf seeds only its own URL). */
function seedRootFile(dir: string): string {
  const require = createRequire(import.meta.url);
  const seeds = require('@sigstore/tuf/seeds.json') as Record<string, { 'root.json': string }>;
  const seed = seeds[DEFAULT_MIRROR_URL];
  if (!seed) throw new WardenError('TRUST_ROOT_UPDATE_FAILED', `@sigstore/tuf carries no seed root for ${DEFAULT_MIRROR_URL}; reinstall mcp-warden.`);
  const file = path.join(dir, 'root.json');
  fs.writeFileSync(file, Buffer.from(seed['root.json'], 'base64'), { mode: 0o600 });
  return file;
}

function parseTarget(mirror: string, name: string, text: string, schema: v.GenericSchema): Record<string, unknown> {
  let plain: unknown;
  try {
    plain = toPlain(readJson(Buffer.from(text, 'utf8'), { maxBytes: MAX_TARGET, maxDepth: 64 }));
  } catch (err) {
    if (err instanceof JsonReadError) throw new WardenError('TRUST_ROOT_UPDATE_FAILED', `the TUF target ${name} of ${mirror} is not valid JSON (${err.message}); nothing was written.`);
    throw err;
  }
  const parsed = v.safeParse(schema, plain);
  if (!parsed.success) {
    throw new WardenError('TRUST_ROOT_UPDATE_FAILED', `${explainIssue(`the TUF target ${name} of ${mirror}`, schema, parsed.issues[0]).problem}; nothing was written. Report it, or import a good file with: mcp-warden trust-root update --from FILE`);
  }
  return plain as Record<string, unknown>;
}

/** The TUF root version the cache reached (for the source line), if it can be read. */
function reachedRootVersion(cacheDir: string, mirror: string): number | undefined {
  try {
    const url = new URL(mirror);
    const repo = encodeURIComponent(url.host + url.pathname.replace(/\/$/, ''));
    const root = JSON.parse(fs.readFileSync(path.join(cacheDir, repo, 'root.json'), 'utf8')) as { signed?: { version?: unknown } };
    return typeof root.signed?.version === 'number' ? root.signed.version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Refreshes the TUF metadata of `mirror` into `cacheDir` (which must exist) and returns the trust root its targets
 * make, dated `now`. Throws TRUST_ROOT_UPDATE_FAILED (exit 3) when the repository cannot be reached or does not
 * verify; writes nothing outside `cacheDir` (a seed root for a mirror goes to a temporary directory, removed).
 */
export async function fetchTrustRoot(cacheDir: string, mirror: string, now: Date): Promise<TrustRootData> {
  const tmp = mirror === DEFAULT_MIRROR_URL ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-warden-tuf-'));
  let timer: NodeJS.Timeout | undefined;
  try {
    const work = (async () => {
      const tuf = await initTUF({ cachePath: cacheDir, mirrorURL: mirror, retry: RETRY, timeout: REQUEST_TIMEOUT_MS, ...(tmp ? { rootPath: seedRootFile(tmp) } : {}) });
      return { trustedRoot: await tuf.getTarget('trusted_root.json'), keys: await tuf.getTarget('registry.npmjs.org/keys.json') };
    })();
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new WardenError('TRUST_ROOT_UPDATE_FAILED', `could not reach the TUF repository ${mirror} (no complete answer within ${DEADLINE_MS / 1000} s); nothing was written. ${AIR_GAPPED}`)), DEADLINE_MS);
    });
    work.catch(() => undefined); // settled after the deadline: already reported
    const targets = await Promise.race([work, deadline]);
    const version = reachedRootVersion(cacheDir, mirror);
    const data: TrustRootData = {
      date: now.toISOString(),
      source: `TUF repository ${mirror}${version !== undefined ? ` (TUF root v${version})` : ''}`,
      trustedRoot: parseTarget(mirror, 'trusted_root.json', targets.trustedRoot, trustedRootSchema) as TrustRootData['trustedRoot'],
      npmKeys: parseTarget(mirror, 'registry.npmjs.org/keys.json', targets.keys, npmKeysSchema) as TrustRootData['npmKeys'],
    };
    openTrustRoot(data, `from ${mirror}`);
    return data;
  } catch (err) {
    throw failed(mirror, err);
  } finally {
    clearTimeout(timer);
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  }
}
