import { createHash } from 'node:crypto';
import { BUNDLE_V03_MEDIA_TYPE, bundleToJSON, toMessageSignatureBundle, type BundleWithMessageSignature, type SerializedBundle } from '@sigstore/bundle';
import { pem } from '@sigstore/core';
import { FulcioSigner, InternalError, MessageSignatureBundleBuilder, RekorWitness, type Artifact, type Signature } from '@sigstore/sign';
import { VerificationError } from '@sigstore/verify';
import { WardenError } from '../error.js';
import { escaped } from '../escape.js';
import type { TrustRoot } from '../provenance/trust-root.js';
import type { IdentityToken } from './identity-token.js';
import { parseOwnSignature, verifyKeyless, type KeylessSigner } from './signature.js';

// Keyless signing of a trust bundle through sigstore's flow, with @sigstore/sign: an ephemeral P-256 key (memory
// only), a Fulcio certificate binding it to the CI job's OIDC identity, a signature over the bundle file's bytes,
// and a Rekor (v1 API) hashedrekord entry; packed as a sigstore bundle v0.3 (one certificate, as `cosign
// sign-blob --new-bundle-format` writes) and verified against the trust root before it is handed back, so what is
// written is what `bundle verify --identity --issuer` accepts on another machine with the same root
// (docs/adr/0028-keyless-bundle-signing.md).

export const DEFAULT_FULCIO_URL = 'https://fulcio.sigstore.dev';
export const DEFAULT_REKOR_URL = 'https://rekor.sigstore.dev';
/** Per request (make-fetch-happen's timeout), and retries on a connection failure, 408, 429 or 5xx. */
const REQUEST_TIMEOUT_MS = 15_000;
const RETRIES = 2;
/** The whole flow: Fulcio and Rekor with their retries. */
const FLOW_TIMEOUT_MS = 120_000;
const MAX_MESSAGE = 300;

export interface KeylessOptions {
  fulcioUrl: string;
  rekorUrl: string;
  root: TrustRoot;
  /** Where the signature will be written (for messages). */
  sigFile: string;
}

export interface KeylessSigned {
  json: SerializedBundle;
  signer: KeylessSigner;
  logIndex: string;
}

/** sigstore-js packs a message signature as a v0.2 bundle with a certificate chain; the warden writes v0.3. */
class V03MessageSignatureBuilder extends MessageSignatureBundleBuilder {
  protected override async package(artifact: Artifact, signature: Signature): Promise<BundleWithMessageSignature> {
    if (signature.key.$case !== 'x509Certificate') throw new Error('the signer returned a bare key, not a Fulcio certificate');
    const certificate = pem.toDER(signature.key.certificate);
    return toMessageSignatureBundle({ digest: createHash('sha256').update(artifact.data).digest(), signature: signature.signature, certificate, certificateChain: false });
  }
}

/** Whether a failure is the network's (no connection, DNS, reset, timeout) rather than an answer. */
function unreachable(cause: unknown): string | undefined {
  const e = cause as { code?: unknown; type?: unknown; name?: unknown } | undefined;
  if (e?.type === 'request-timeout' || e?.name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  if (e?.type === 'system' || (typeof e?.code === 'string' && /^E[A-Z_]+$/.test(e.code))) return typeof e?.code === 'string' ? e.code : 'connection failed';
  return undefined;
}

function short(text: string): string {
  const t = escaped(text);
  return t.length > MAX_MESSAGE ? `${t.slice(0, MAX_MESSAGE)}…` : t;
}

/** A refusal for a failure of the flow; never quotes the token (sigstore-js puts it in some of its messages). */
function failure(err: unknown, o: KeylessOptions): WardenError {
  const service = err instanceof InternalError && err.code.startsWith('TLOG_') ? { name: 'Rekor', url: o.rekorUrl } : err instanceof InternalError && err.code.startsWith('CA_') ? { name: 'Fulcio', url: o.fulcioUrl } : undefined;
  if (err instanceof InternalError && err.code.startsWith('IDENTITY_TOKEN_')) {
    return new WardenError('BUNDLE_SIGN_IDENTITY_INVALID', `sigstore-js could not use the identity token (${err.code}); nothing was written. Fetch a fresh token right before signing.`);
  }
  if (service) {
    const cause = err instanceof InternalError ? err.cause : undefined;
    const net = unreachable(cause);
    if (net) return new WardenError('BUNDLE_SIGN_UNREACHABLE', `${service.name} at ${service.url} could not be reached (${net}, after ${RETRIES + 1} attempts); nothing was written. Check the network and the URL (--${service.name.toLowerCase()}-url, MCP_WARDEN_${service.name.toUpperCase()}_URL).`);
    const status = (cause as { statusCode?: unknown } | undefined)?.statusCode;
    const said = cause instanceof Error ? short(cause.message.replace(/^\(\d+\) /, '')) : 'no reason given'; // HTTPError says "(401) <message>"
    const hint = service.name === 'Fulcio' && (status === 400 || status === 401 || status === 403) ? " Fulcio did not accept the identity token: check that its issuer is one this Fulcio trusts and its audience is 'sigstore'." : '';
    return new WardenError('BUNDLE_SIGN_FAILED', `${service.name} at ${service.url} did not ${service.name === 'Fulcio' ? 'issue a signing certificate' : 'log the signature'}: ${typeof status === 'number' ? `HTTP ${status}, ` : ''}${said}; nothing was written.${hint}`);
  }
  return new WardenError('BUNDLE_SIGN_FAILED', `keyless signing through Fulcio (${o.fulcioUrl}) and Rekor (${o.rekorUrl}) failed: ${short(err instanceof Error ? err.message : String(err))}; nothing was written.`);
}

/** Runs the flow within FLOW_TIMEOUT_MS. */
async function withDeadline<T>(work: Promise<T>, o: KeylessOptions): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WardenError('BUNDLE_SIGN_UNREACHABLE', `Fulcio (${o.fulcioUrl}) and Rekor (${o.rekorUrl}) did not complete the signature within ${FLOW_TIMEOUT_MS / 1000} s; nothing was written. Check the network and the URLs.`)), FLOW_TIMEOUT_MS);
    timer.unref();
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Signs `bytes` keyless; returns the sigstore bundle (verified against `o.root`) and who it names as the signer. */
export async function signKeyless(bytes: Buffer, identity: IdentityToken, o: KeylessOptions): Promise<KeylessSigned> {
  const builder = new V03MessageSignatureBuilder({
    signer: new FulcioSigner({ fulcioBaseURL: o.fulcioUrl, identityProvider: { getToken: () => Promise.resolve(identity.token) }, retry: RETRIES, timeout: REQUEST_TIMEOUT_MS }),
    witnesses: [new RekorWitness({ rekorBaseURL: o.rekorUrl, fetchOnConflict: false, retry: RETRIES, timeout: REQUEST_TIMEOUT_MS })],
  });
  let bundle: BundleWithMessageSignature;
  try {
    bundle = await withDeadline(builder.create({ data: bytes }), o);
  } catch (err) {
    if (err instanceof WardenError) throw err;
    throw failure(err, o);
  }
  const json = bundleToJSON({ ...bundle, mediaType: BUNDLE_V03_MEDIA_TYPE });
  // What is written must be what verifiers accept: read back as `bundle verify` reads it, checked against the root.
  const parsed = parseOwnSignature(json, o.sigFile);
  let signer: KeylessSigner;
  try {
    signer = verifyKeyless(parsed, bytes, o.sigFile, o.root);
  } catch (err) {
    if (err instanceof WardenError && err.code === 'BUNDLE_SIGNATURE_INVALID' && err.cause instanceof VerificationError) {
      throw new WardenError('BUNDLE_SIGN_UNVERIFIED', `the signature made through Fulcio (${o.fulcioUrl}) and Rekor (${o.rekorUrl}) does not verify against the sigstore trust root in use (${o.root.origin}): ${err.cause.code}: ${short(err.cause.message)}. Nothing was written. For a staging or private sigstore instance, import its trusted root first (mcp-warden trust-root update --from FILE), as every machine that verifies the bundle must.`);
    }
    throw err;
  }
  return { json, signer, logIndex: bundle.verificationMaterial.tlogEntries[0]?.logIndex ?? '?' };
}
