import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trustRootOf, writeTrustRoot } from '../helpers/provenance-registry.js';
import { GITHUB_ISSUER, createTestPki, sanOf, type Identity, type TestSigstore } from '../helpers/sigstore-pki.js';
import { auditEvents, cli } from '../helpers/warden.js';
import { cliAsync, envWithoutIdentity, machine, sharedMachineA, tempDir } from './helpers.js';
import { TestIssuer, deadUrl, fulcioStandIn, githubClaims, githubTokenEndpoint, rekorStandIn, type StandIn } from './sigstore-standins.js';

// `bundle sign --keyless` through the real @sigstore/sign flow, without the network: the OIDC issuer, GitHub
// Actions' token endpoint, Fulcio and Rekor are loopback stand-ins for the test sigstore PKI, and the homes' trust
// root is that PKI's (docs/adr/0028-keyless-bundle-signing.md says what this does and does not prove).

const CI: Identity = { repository: 'https://github.com/acme/mcp-fleet', workflow: '.github/workflows/bundle.yml', ref: 'refs/heads/main', commit: 'b'.repeat(40) };
const SAN = sanOf(CI);
const REQUEST_TOKEN = 'gha-request-token-that-must-stay-secret';
let root: string;
let homeA: string;
let homeB: string;
let pki: TestSigstore;
let issuer: TestIssuer;
let fulcio: StandIn;
let rekor: StandIn;
let github: StandIn;
let bundle: string;
/** Every identity token the token endpoint handed out. */
const minted: string[] = [];

/** A copy of the created bundle under a new name (each refusal test signs its own, so "nothing written" is visible). */
function copy(name: string): string {
  const f = path.join(root, `${name}.bundle.json`);
  fs.copyFileSync(bundle, f);
  return f;
}

/** The environment of a CI job whose warden talks to the stand-ins. */
const jobEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => envWithoutIdentity({ MCP_WARDEN_FULCIO_URL: fulcio.url, MCP_WARDEN_REKOR_URL: rekor.url, ...extra });
const githubJob = (): NodeJS.ProcessEnv => jobEnv({ GITHUB_ACTIONS: 'true', ACTIONS_ID_TOKEN_REQUEST_URL: `${github.url}/token?api-version=2.0`, ACTIONS_ID_TOKEN_REQUEST_TOKEN: REQUEST_TOKEN });

beforeAll(async () => {
  root = tempDir('warden-bundle-keyless-sign-');
  homeA = sharedMachineA(root).homeA;
  homeB = machine(root, 'B');
  pki = createTestPki();
  for (const h of [homeA, homeB]) writeTrustRoot(h, trustRootOf(pki, new Date()));
  issuer = new TestIssuer();
  [fulcio, rekor, github] = await Promise.all([
    fulcioStandIn(pki, issuer),
    rekorStandIn(pki),
    githubTokenEndpoint(REQUEST_TOKEN, (audience) => {
      const t = issuer.sign({ ...githubClaims(CI), aud: audience });
      minted.push(t);
      return t;
    }),
  ]);
  bundle = path.join(root, 'fleet.bundle.json');
  expect(cli(homeA, ['bundle', 'create', '--out', bundle]).code).toBe(0);
});
afterAll(async () => {
  await Promise.all([fulcio, rekor, github].map((s) => s?.close()));
  fs.rmSync(root, { recursive: true, force: true });
});

describe('bundle sign --keyless, through Fulcio and Rekor stand-ins', () => {
  it("in a GitHub Actions job the bundle is signed as the workflow's identity, and verifies and applies on another machine pinned to it", async () => {
    const r = await cliAsync(homeA, ['bundle', 'sign', bundle, '--keyless'], githubJob());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`keyless as ${SAN} (issuer ${GITHUB_ISSUER})`);
    const sig = JSON.parse(fs.readFileSync(`${bundle}.sigstore.json`, 'utf8'));
    expect(sig.mediaType).toBe('application/vnd.dev.sigstore.bundle.v0.3+json');
    expect(Object.keys(sig.verificationMaterial)).toContain('certificate');
    expect(sig.verificationMaterial.tlogEntries.map((e: { kindVersion: unknown }) => e.kindVersion)).toEqual([{ kind: 'hashedrekord', version: '0.0.1' }]);

    const pinned = ['--identity', 'https://github.com/acme/mcp-fleet/.github/workflows/bundle.yml@refs/heads/*', '--issuer', GITHUB_ISSUER];
    const v = cli(homeB, ['bundle', 'verify', bundle, ...pinned]);
    expect([v.code, v.stderr]).toEqual([0, '']);
    expect(v.stdout).toContain(SAN);
    const a = cli(homeB, ['bundle', 'apply', bundle, ...pinned, '--env', 'basic.SECRET_TOKEN=b']);
    expect([a.code, a.stderr]).toEqual([0, '']);
  });

  it('the same signature from another identity, a pattern matching only part of the SAN, or another issuer is refused', () => {
    for (const [identity, iss] of [
      ['https://github.com/acme/other/*', GITHUB_ISSUER],
      ['github.com/acme/mcp-fleet/', GITHUB_ISSUER],
      [SAN, 'https://accounts.google.com'],
    ] as const) {
      const r = cli(homeB, ['bundle', 'verify', bundle, '--identity', identity, '--issuer', iss]);
      expect(r.stderr).toContain('BUNDLE_UNTRUSTED_SIGNER');
      expect(r.code).toBe(3);
    }
  });

  it('no identity token, request token or ephemeral key is written to the output, the signature or the home', () => {
    expect(minted.length).toBeGreaterThan(0);
    const files = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
    const everything = [...files(homeA), `${bundle}.sigstore.json`].map((f) => fs.readFileSync(f, 'utf8')).join('\n');
    for (const secret of [...minted, REQUEST_TOKEN]) expect(everything).not.toContain(secret);
    expect(everything).not.toContain('PRIVATE KEY');
  });

  it("SIGSTORE_ID_TOKEN (cosign's variable, GitLab CI's id_tokens) is the token when set; --fulcio-url and --rekor-url name the instance", async () => {
    const f = copy('env-token');
    const token = issuer.sign(githubClaims(CI));
    const r = await cliAsync(homeA, ['bundle', 'sign', f, '--keyless', '--fulcio-url', fulcio.url, '--rekor-url', `${rekor.url}/`, '--json'], envWithoutIdentity({ SIGSTORE_ID_TOKEN: token }));
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(JSON.parse(r.stdout)).toMatchObject({ keyless: true, identity: SAN, issuer: GITHUB_ISSUER, fulcio: fulcio.url, rekor: rekor.url });
    expect(r.stdout).not.toContain(token);
    expect(cli(homeB, ['bundle', 'verify', f, '--identity', SAN, '--issuer', GITHUB_ISSUER]).code).toBe(0);
  });
});

describe('bundle sign --keyless refuses, writing nothing', () => {
  /** Signs a fresh copy; asserts nothing was written beside it. */
  async function refused(name: string, env: NodeJS.ProcessEnv, flags: string[] = []): Promise<{ code: number | null; stderr: string }> {
    const f = copy(name);
    const r = await cliAsync(homeA, ['bundle', 'sign', f, '--keyless', ...flags], env);
    expect(fs.existsSync(`${f}.sigstore.json`)).toBe(false);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    return r;
  }

  it('without an identity token: BUNDLE_SIGN_NO_IDENTITY, saying how to get one in CI or to sign with --key; Fulcio is not asked', async () => {
    const before = fulcio.requests;
    const r = await refused('no-token', jobEnv({}));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('BUNDLE_SIGN_NO_IDENTITY');
    expect(r.stderr).toContain('id-token: write');
    expect(r.stderr).toContain('SIGSTORE_ID_TOKEN');
    expect(r.stderr).toContain('--key PRIVATE.pem');
    expect(fulcio.requests).toBe(before);
  });

  it('in a GitHub Actions job not allowed to request a token, the refusal names the missing permission', async () => {
    const r = await refused('no-permission', jobEnv({ GITHUB_ACTIONS: 'true' }));
    expect(r.stderr).toMatch(/BUNDLE_SIGN_NO_IDENTITY.*lacks 'permissions: id-token: write'/);
  });

  it("GitHub Actions' token endpoint refusing the request token: BUNDLE_SIGN_NO_IDENTITY with its status, the request token not echoed", async () => {
    const r = await refused('gha-403', { ...githubJob(), ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'another-request-token' });
    expect(r.stderr).toMatch(/BUNDLE_SIGN_NO_IDENTITY.*token endpoint \(http:\/\/127\.0\.0\.1:\d+\) answered HTTP 403/);
    expect(r.stderr).not.toContain('another-request-token');
  });

  it('an expired token is refused before Fulcio is asked (BUNDLE_SIGN_IDENTITY_INVALID), without echoing it', async () => {
    const before = fulcio.requests;
    const token = issuer.sign(githubClaims(CI, new Date(Date.now() - 3_600_000)));
    const r = await refused('expired', jobEnv({ SIGSTORE_ID_TOKEN: token }));
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining('BUNDLE_SIGN_IDENTITY_INVALID')]);
    expect(r.stderr).toContain('expired at');
    expect(r.stderr).not.toContain(token);
    expect(fulcio.requests).toBe(before);
  });

  it("a token Fulcio does not accept: BUNDLE_SIGN_FAILED with Fulcio's URL and answer", async () => {
    const token = new TestIssuer().sign(githubClaims(CI));
    const r = await refused('untrusted-issuer', jobEnv({ SIGSTORE_ID_TOKEN: token }));
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`BUNDLE_SIGN_FAILED: Fulcio at ${fulcio.url} did not issue a signing certificate: HTTP 401`);
    expect(r.stderr).not.toContain(token);
  });

  it('Fulcio unreachable: BUNDLE_SIGN_UNREACHABLE naming its URL', async () => {
    const dead = await deadUrl();
    const r = await refused('fulcio-down', jobEnv({ SIGSTORE_ID_TOKEN: issuer.sign(githubClaims(CI)), MCP_WARDEN_FULCIO_URL: dead }));
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`BUNDLE_SIGN_UNREACHABLE: Fulcio at ${dead} could not be reached (ECONNREFUSED`);
  });

  it('Rekor unreachable: BUNDLE_SIGN_UNREACHABLE naming its URL', async () => {
    const dead = await deadUrl();
    const r = await refused('rekor-down', jobEnv({ SIGSTORE_ID_TOKEN: issuer.sign(githubClaims(CI)) }), ['--rekor-url', dead]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`BUNDLE_SIGN_UNREACHABLE: Rekor at ${dead} could not be reached`);
  });

  it('a signature from an instance the trust root in use does not name (BUNDLE_SIGN_UNVERIFIED), saying how to import its root', async () => {
    const other = machine(root, 'other-root');
    writeTrustRoot(other, trustRootOf(createTestPki(), new Date(Date.now() + 86_400_000)));
    const f = copy('other-root');
    const r = await cliAsync(other, ['bundle', 'sign', f, '--keyless'], jobEnv({ SIGSTORE_ID_TOKEN: issuer.sign(githubClaims(CI)) }));
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('BUNDLE_SIGN_UNVERIFIED');
    expect(r.stderr).toContain('trust-root update --from FILE');
    expect(fs.existsSync(`${f}.sigstore.json`)).toBe(false);
  });

  it('a Fulcio URL in plain http to a host that is not loopback is a usage error; so are the URL flags without --keyless', async () => {
    const r = await refused('plain-http', jobEnv({ SIGSTORE_ID_TOKEN: issuer.sign(githubClaims(CI)) }), ['--fulcio-url', 'http://fulcio.example']);
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining('USAGE')]);
    const k = cli(homeA, ['bundle', 'sign', copy('flags'), '--key', '/nonexistent.pem', '--rekor-url', rekor.url]);
    expect([k.code, k.stderr]).toEqual([2, expect.stringContaining('--fulcio-url and --rekor-url go with --keyless')]);
  });

  it('a refused keyless signing leaves no audit trace of the token either', () => {
    const log = path.join(homeA, 'audit.log');
    const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
    for (const secret of [...minted, REQUEST_TOKEN]) expect(text).not.toContain(secret);
    expect(auditEvents(homeA).every((e) => !JSON.stringify(e).includes('eyJ'))).toBe(true);
  });
});
