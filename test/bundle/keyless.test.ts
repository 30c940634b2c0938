import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trustRootOf, writeTrustRoot, type TrustRootFile } from '../helpers/provenance-registry.js';
import { GITHUB_ISSUER, createTestPki, sanOf, type Identity, type TestSigstore } from '../helpers/sigstore-pki.js';
import { auditEvents, cli } from '../helpers/warden.js';
import { machine, sharedMachineA, snapshot, tempDir } from './helpers.js';

// Keyless signatures without the network: a test sigstore PKI (Fulcio CA, CT log, Rekor) makes the sigstore bundle
// `cosign sign-blob` would make in CI, and the home's trust root is that PKI's (signing keyless through the warden:
// keyless-sign.test.ts).

const CI: Identity = { repository: 'https://github.com/acme/mcp-fleet', workflow: '.github/workflows/bundle.yml', ref: 'refs/heads/main', commit: 'a'.repeat(40) };
let root: string;
let homeA: string;
let homeB: string;
let pki: TestSigstore;
let bundle: string;

beforeAll(() => {
  root = tempDir('warden-bundle-keyless-');
  homeA = sharedMachineA(root).homeA;
  homeB = machine(root, 'B');
  pki = createTestPki();
  writeTrustRoot(homeB, trustRootOf(pki, new Date()));
  bundle = path.join(root, 'ci.bundle.json');
  expect(cli(homeA, ['bundle', 'create', '--out', bundle]).code).toBe(0);
  fs.writeFileSync(`${bundle}.sigstore.json`, JSON.stringify(pki.messageSignature(fs.readFileSync(bundle), CI)));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('keyless bundles', () => {
  it('a keyless signature verifies against the pinned identity (an anchored pattern) and issuer', () => {
    const r = cli(homeB, ['bundle', 'verify', bundle, '--identity', 'https://github.com/acme/mcp-fleet/*', '--issuer', GITHUB_ISSUER]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(sanOf(CI));
  });

  it('another identity, a pattern that matches only part of the SAN, or another issuer is refused', () => {
    for (const [identity, issuer] of [
      ['https://github.com/acme/other/*', GITHUB_ISSUER],
      ['github.com/acme/mcp-fleet', GITHUB_ISSUER], // unanchored, it would match
      ['https://github.com/acme/mcp-fleet/*', 'https://accounts.google.com'],
    ] as const) {
      const r = cli(homeB, ['bundle', 'verify', bundle, '--identity', identity, '--issuer', issuer]);
      expect(r.stderr).toContain('BUNDLE_UNTRUSTED_SIGNER');
      expect(r.code).toBe(3);
    }
  });

  it("a signature by the pinned owner's reusable workflow, called from another repository, is refused; called from the owner's own, it matches", () => {
    const reusable = 'https://github.com/acme/shared/.github/workflows/sign.yml@refs/heads/main';
    const sign = (name: string, repository: string): string => {
      const f = path.join(root, `${name}.bundle.json`);
      fs.copyFileSync(bundle, f);
      fs.writeFileSync(`${f}.sigstore.json`, JSON.stringify(pki.messageSignature(fs.readFileSync(f), { ...CI, repository, signer: reusable })));
      return f;
    };
    const outsider = cli(homeB, ['bundle', 'verify', sign('outsider', 'https://github.com/evil/fork'), '--identity', 'https://github.com/acme/*', '--issuer', GITHUB_ISSUER]);
    expect([outsider.code, outsider.stderr]).toEqual([3, expect.stringContaining('BUNDLE_UNTRUSTED_SIGNER')]);
    const own = cli(homeB, ['bundle', 'verify', sign('own', 'https://github.com/acme/mcp-fleet'), '--identity', 'https://github.com/acme/*', '--issuer', GITHUB_ISSUER]);
    expect([own.code, own.stderr]).toEqual([0, '']);
    expect(own.stdout).toContain(reusable);
  });

  it('a keyless signature over other bytes is refused', () => {
    const other = path.join(root, 'other.bundle.json');
    fs.writeFileSync(other, fs.readFileSync(bundle, 'utf8').replace('"enforce"', '"monitor"'));
    fs.copyFileSync(`${bundle}.sigstore.json`, `${other}.sigstore.json`);
    const r = cli(homeB, ['bundle', 'verify', other, '--identity', 'https://github.com/acme/mcp-fleet/*', '--issuer', GITHUB_ISSUER]);
    expect(r.stderr).toContain('BUNDLE_SIGNATURE_INVALID');
    expect(r.code).toBe(3);
  });

  it('a keyless bundle applies with --identity and --issuer', () => {
    const r = cli(homeB, ['bundle', 'apply', bundle, '--identity', 'https://github.com/acme/*', '--issuer', GITHUB_ISSUER, '--env', 'basic.SECRET_TOKEN=b']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});

describe('keyless bundles against a stale trust root: TRUST_ROOT_STALE, as for npm provenance', () => {
  const DAY = 86_400_000;
  const PINNED = ['--identity', 'https://github.com/acme/mcp-fleet/*', '--issuer', GITHUB_ISSUER];
  /** A machine whose trust root is `trustRoot`. */
  const machineWith = (name: string, trustRoot: TrustRootFile): string => {
    const home = machine(root, name);
    writeTrustRoot(home, trustRoot);
    return home;
  };

  it('a root taken before the bundle was signed, whose keys signed none of it: verify and apply refuse with TRUST_ROOT_STALE, nothing changed, audited', () => {
    const stale = machineWith('stale-date', trustRootOf(createTestPki(), new Date(Date.now() - 30 * DAY)));
    const v = cli(stale, ['bundle', 'verify', bundle, ...PINNED]);
    expect([v.code, v.stderr]).toEqual([3, expect.stringContaining('TRUST_ROOT_STALE')]);
    expect(v.stderr).toContain("Update it with 'mcp-warden trust-root update'");
    const before = snapshot(stale);
    const a = cli(stale, ['bundle', 'apply', bundle, ...PINNED, '--env', 'basic.SECRET_TOKEN=b']);
    expect([a.code, a.stderr]).toEqual([3, expect.stringContaining('TRUST_ROOT_STALE')]);
    expect(snapshot(stale)).toEqual(before);
    expect(auditEvents(stale).filter((e) => e.event === 'bundle_rejected').map((e) => e.reason)).toEqual(['TRUST_ROOT_STALE']);
  });

  it("a root whose authorities' windows all closed before the signing time: TRUST_ROOT_STALE", () => {
    const ended = structuredClone(trustRootOf(pki, new Date(Date.now() - 2 * DAY)));
    const end = new Date(Date.now() - DAY).toISOString();
    for (const w of [...ended.trustedRoot.tlogs, ...ended.trustedRoot.ctlogs].map((x) => x.publicKey.validFor)) w.end = end;
    for (const ca of ended.trustedRoot.certificateAuthorities) ca.validFor.end = end;
    const r = cli(machineWith('stale-windows', ended), ['bundle', 'verify', bundle, ...PINNED]);
    expect([r.code, r.stderr]).toEqual([3, expect.stringContaining('TRUST_ROOT_STALE')]);
  });

  it('a root newer than the signature that does not vouch for it is no stale root: BUNDLE_SIGNATURE_INVALID', () => {
    const r = cli(machineWith('newer-other', trustRootOf(createTestPki(), new Date(Date.now() + DAY))), ['bundle', 'verify', bundle, ...PINNED]);
    expect([r.code, r.stderr]).toEqual([3, expect.stringContaining('BUNDLE_SIGNATURE_INVALID')]);
  });
});
