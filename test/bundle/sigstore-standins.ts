import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GITHUB_ISSUER, type Identity, type TestSigstore } from '../helpers/sigstore-pki.js';
import { pem } from '../helpers/sigstore-cert.js';

// The network peers of keyless signing, on loopback, for the test sigstore PKI (test/helpers/sigstore-pki.ts): an
// OIDC issuer's key and the tokens it signs, GitHub Actions' token endpoint, a Fulcio that checks the token and
// the proof of possession before it certifies the key in the request, and a Rekor (v1 API) that logs a
// hashedrekord in the PKI's transparency log. They are the peers, not the code under test: the warden drives
// them through @sigstore/sign as it drives the public-good instance.

/** The claims a GitHub Actions OIDC token carries for `id` (the ones Fulcio reads), valid `ttl` seconds from `now`. */
export function githubClaims(id: Identity, now = new Date(), ttl = 300): Record<string, unknown> {
  const repo = new URL(id.repository).pathname.slice(1);
  const iat = Math.floor(now.getTime() / 1000);
  return { iss: id.issuer ?? GITHUB_ISSUER, aud: 'sigstore', sub: `repo:${repo}:ref:${id.ref}`, repository: repo, ref: id.ref, sha: id.commit, job_workflow_ref: `${repo}/${id.workflow}@${id.ref}`, iat, nbf: iat, exp: iat + ttl };
}

/** An OIDC issuer: an ES256 key and the JWTs it signs. */
export class TestIssuer {
  private readonly keys = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  readonly publicKey = this.keys.publicKey;

  sign(claims: Record<string, unknown>): string {
    const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
    const input = `${part({ alg: 'ES256', typ: 'JWT', kid: 'test' })}.${part(claims)}`;
    return `${input}.${crypto.sign('sha256', Buffer.from(input), { key: this.keys.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  }
}

/** A loopback HTTP server; `requests` counts what reached it. */
export interface StandIn {
  url: string;
  requests: number;
  close(): Promise<void>;
}

async function serve(handle: (req: http.IncomingMessage, body: string) => { status: number; json: unknown }): Promise<StandIn> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      standIn.requests++;
      let out: { status: number; json: unknown };
      try {
        out = handle(req, Buffer.concat(chunks).toString('utf8'));
      } catch (err) {
        out = { status: 400, json: { code: 3, message: (err as Error).message } };
      }
      res.writeHead(out.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(out.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const standIn: StandIn = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return standIn;
}

/** A loopback URL nothing listens on (a port that was just bound and released). */
export async function deadUrl(): Promise<string> {
  const s = await serve(() => ({ status: 500, json: {} }));
  await s.close();
  return s.url;
}

/** GitHub Actions' token endpoint: answers a GET bearing `requestToken` with a token `mint` makes for the audience. */
export function githubTokenEndpoint(requestToken: string, mint: (audience: string) => string): Promise<StandIn> {
  return serve((req) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.headers.authorization !== `Bearer ${requestToken}`) return { status: 403, json: { message: 'bad request token' } };
    return { status: 200, json: { count: 1, value: mint(url.searchParams.get('audience') ?? '') } };
  });
}

function verifyJwt(token: string, issuer: TestIssuer): Record<string, unknown> {
  const [h, p, sig] = token.split('.');
  if (!h || !p || !sig || !crypto.verify('sha256', Buffer.from(`${h}.${p}`), { key: issuer.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(sig, 'base64url'))) throw new Error('the identity token is not signed by a trusted issuer');
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>;
  if (claims.aud !== 'sigstore') throw new Error(`audience ${String(claims.aud)} is not sigstore`);
  if (typeof claims.exp !== 'number' || claims.exp * 1000 < Date.now()) throw new Error('the identity token has expired');
  return claims;
}

/**
 * Fulcio's POST /api/v2/signingCert: the token must be signed by `issuer` for audience "sigstore", and the proof of
 * possession must be the requester's signature over the token's subject with the key to certify; the answer is the
 * PKI's leaf for the GitHub identity the claims name, with its chain, PEM (as Fulcio answers).
 */
export function fulcioStandIn(pki: TestSigstore, issuer: TestIssuer): Promise<StandIn> {
  return serve((req, body) => {
    if (req.method !== 'POST' || req.url !== '/api/v2/signingCert') return { status: 404, json: { message: 'not found' } };
    const r = JSON.parse(body) as { credentials: { oidcIdentityToken: string }; publicKeyRequest: { publicKey: { content: string }; proofOfPossession: string } };
    let claims: Record<string, unknown>;
    try {
      claims = verifyJwt(r.credentials.oidcIdentityToken, issuer);
    } catch (err) {
      return { status: 401, json: { code: 16, message: `There was an error processing the identity token: ${(err as Error).message}` } };
    }
    const key = crypto.createPublicKey(r.publicKeyRequest.publicKey.content);
    if (!crypto.verify('sha256', Buffer.from(String(claims.sub)), key, Buffer.from(r.publicKeyRequest.proofOfPossession, 'base64'))) return { status: 400, json: { code: 3, message: 'The signature supplied in the request could not be verified' } };
    const [repoPath, ref] = String(claims.job_workflow_ref).split('@') as [string, string];
    const repository = `https://github.com/${String(claims.repository)}`;
    const identity: Identity = { repository, workflow: repoPath.slice(String(claims.repository).length + 1), ref, commit: String(claims.sha), issuer: String(claims.iss) };
    const chain = pki.certify(key.export({ type: 'spki', format: 'der' }), identity);
    return { status: 201, json: { signedCertificateEmbeddedSct: { chain: { certificates: chain.map((c) => `${pem('CERTIFICATE', c)}\n`) } } } };
  });
}

/** Rekor's POST /api/v1/log/entries for a hashedrekord 0.0.1: logged in the PKI's log, answered in Rekor's v1 shape. */
export function rekorStandIn(pki: TestSigstore): Promise<StandIn> {
  return serve((req, body) => {
    if (req.method !== 'POST' || req.url !== '/api/v1/log/entries') return { status: 404, json: { message: 'not found' } };
    const e = JSON.parse(body) as { kind: string; apiVersion: string; spec: { data: { hash: { algorithm: string; value: string } }; signature: { content: string; publicKey: { content: string } } } };
    if (e.kind !== 'hashedrekord' || e.apiVersion !== '0.0.1' || e.spec.data.hash.algorithm !== 'sha256') return { status: 400, json: { code: 400, message: `unsupported entry ${e.kind} ${e.apiVersion}` } };
    const certPem = Buffer.from(e.spec.signature.publicKey.content, 'base64').toString('utf8'); // as submitted
    const entry = pki.rekor.logHashedRekord(Buffer.from(e.spec.signature.content, 'base64'), Buffer.from(e.spec.data.hash.value, 'hex'), certPem, Math.floor(Date.now() / 1000));
    const hex = (b64: string): string => Buffer.from(b64, 'base64').toString('hex');
    const uuid = crypto.createHash('sha256').update(entry.canonicalizedBody).digest('hex');
    const p = entry.inclusionProof;
    return {
      status: 201,
      json: {
        [uuid]: {
          body: entry.canonicalizedBody,
          integratedTime: Number(entry.integratedTime),
          logID: hex(entry.logId.keyId),
          logIndex: Number(entry.logIndex),
          verification: {
            signedEntryTimestamp: entry.inclusionPromise.signedEntryTimestamp,
            inclusionProof: { logIndex: Number(p.logIndex), treeSize: Number(p.treeSize), rootHash: hex(p.rootHash), hashes: p.hashes.map(hex), checkpoint: p.checkpoint.envelope },
          },
        },
      },
    };
  });
}
