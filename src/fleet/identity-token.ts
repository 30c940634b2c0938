import { WardenError } from '../error.js';
import { escaped } from '../escape.js';

// The OIDC identity token keyless signing trades for a Fulcio certificate, found the way CI hands it out and the
// way cosign and sigstore-js look for it: SIGSTORE_ID_TOKEN (cosign's env provider; GitLab CI's `id_tokens`), else
// GitHub Actions' token endpoint (ACTIONS_ID_TOKEN_REQUEST_URL + ACTIONS_ID_TOKEN_REQUEST_TOKEN, present only in a
// job with `permissions: id-token: write`), asked for audience "sigstore". The token is a bearer secret: it is
// held in memory for the one request to Fulcio and never printed, logged, audited or written.

/** Audience Fulcio (public good) accepts. */
export const SIGSTORE_AUDIENCE = 'sigstore';
const MAX_TOKEN_BYTES = 64 * 1024;
const GITHUB_TIMEOUT_MS = 15_000;

export interface IdentityToken {
  /** The JWT itself: a secret. */
  readonly token: string;
  /** Where it came from, for messages: 'SIGSTORE_ID_TOKEN' or 'GitHub Actions'. */
  readonly source: string;
  /** The token's `iss` claim, as the token says (Fulcio and then the verifier decide what it is worth). */
  readonly issuer: string;
}

const HOW = "In GitHub Actions give the job 'permissions: id-token: write'; in GitLab CI declare 'id_tokens: SIGSTORE_ID_TOKEN: aud: sigstore'; elsewhere put an OIDC token for audience 'sigstore' in SIGSTORE_ID_TOKEN. Or sign with a local key: mcp-warden bundle sign FILE --key PRIVATE.pem";

function noIdentity(what: string): WardenError {
  return new WardenError('BUNDLE_SIGN_NO_IDENTITY', `keyless signing needs an OIDC identity token, and ${what}; nothing was signed or written. ${HOW}.`);
}

function invalid(source: string, what: string): WardenError {
  return new WardenError('BUNDLE_SIGN_IDENTITY_INVALID', `the identity token from ${source} ${what}; nothing was signed or written. Fetch a fresh token right before signing (CI tokens live minutes). ${HOW}.`);
}

/** Reads a response body, refusing one over `max` bytes. */
async function boundedText(res: Response, max: number): Promise<string | undefined> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Asks GitHub Actions' token endpoint for a token with audience "sigstore". */
async function githubToken(requestUrl: string, requestToken: string): Promise<string> {
  let url: URL;
  try {
    url = new URL(requestUrl);
  } catch {
    throw noIdentity('ACTIONS_ID_TOKEN_REQUEST_URL is not a URL');
  }
  url.searchParams.set('audience', SIGSTORE_AUDIENCE);
  const where = `GitHub Actions' token endpoint (${url.origin})`;
  let res: Response;
  try {
    res = await fetch(url, { headers: { Accept: 'application/json', Authorization: `Bearer ${requestToken}` }, redirect: 'error', signal: AbortSignal.timeout(GITHUB_TIMEOUT_MS) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    throw noIdentity(`${where} could not be reached (${escaped(cause)}, within ${GITHUB_TIMEOUT_MS / 1000} s)`);
  }
  const text = await boundedText(res, MAX_TOKEN_BYTES).catch(() => undefined);
  if (!res.ok) throw noIdentity(`${where} answered HTTP ${res.status}`);
  let value: unknown;
  try {
    value = text === undefined ? undefined : (JSON.parse(text) as { value?: unknown }).value;
  } catch {
    value = undefined;
  }
  if (typeof value !== 'string' || value === '') throw noIdentity(`${where} answered without a token (expected JSON {"value": "<jwt>"} under ${MAX_TOKEN_BYTES / 1024} KiB)`);
  return value;
}

/** The token's claims, checked for what Fulcio needs, so a bad token is named here and not echoed by a library. */
function claimsOf(token: string, source: string, now: Date): { issuer: string } {
  if (token.length > MAX_TOKEN_BYTES) throw invalid(source, `is ${token.length} bytes long (at most ${MAX_TOKEN_BYTES / 1024} KiB)`);
  const parts = token.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) throw invalid(source, 'is not a JWT (three base64url parts)');
  let claims: Record<string, unknown>;
  try {
    claims = JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    throw invalid(source, 'is not a JWT (its payload is not JSON)');
  }
  if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) throw invalid(source, 'is not a JWT (its payload is not a JSON object)');
  if (typeof claims.iss !== 'string' || claims.iss === '') throw invalid(source, "names no issuer ('iss')");
  if (typeof claims.exp !== 'number') throw invalid(source, "has no expiry ('exp')");
  if (claims.exp * 1000 <= now.getTime()) throw invalid(source, `expired at ${new Date(claims.exp * 1000).toISOString()}`);
  if (typeof claims.email === 'string' && claims.email_verified !== true) throw invalid(source, 'names an email address its issuer has not verified');
  if (typeof claims.email !== 'string' && (typeof claims.sub !== 'string' || claims.sub === '')) throw invalid(source, "names no subject ('sub')");
  return { issuer: claims.iss };
}

/** The identity token of this CI job, or a refusal that says how to get one. */
export async function findIdentityToken(env: NodeJS.ProcessEnv, now: Date): Promise<IdentityToken> {
  let token: string;
  let source: string;
  if (env.SIGSTORE_ID_TOKEN) {
    token = env.SIGSTORE_ID_TOKEN.trim();
    source = 'SIGSTORE_ID_TOKEN';
  } else if (env.ACTIONS_ID_TOKEN_REQUEST_URL && env.ACTIONS_ID_TOKEN_REQUEST_TOKEN) {
    token = await githubToken(env.ACTIONS_ID_TOKEN_REQUEST_URL, env.ACTIONS_ID_TOKEN_REQUEST_TOKEN);
    source = 'GitHub Actions';
  } else if (env.ACTIONS_ID_TOKEN_REQUEST_URL || env.ACTIONS_ID_TOKEN_REQUEST_TOKEN) {
    throw noIdentity(`only ${env.ACTIONS_ID_TOKEN_REQUEST_URL ? 'ACTIONS_ID_TOKEN_REQUEST_URL' : 'ACTIONS_ID_TOKEN_REQUEST_TOKEN'} of GitHub Actions' pair is set`);
  } else {
    throw noIdentity(env.GITHUB_ACTIONS === 'true' ? "this GitHub Actions job was given none (ACTIONS_ID_TOKEN_REQUEST_URL is not set: the job lacks 'permissions: id-token: write')" : 'none was found (SIGSTORE_ID_TOKEN is not set, and this is not a GitHub Actions job that may request one)');
  }
  return { token, source, ...claimsOf(token, source, now) };
}
