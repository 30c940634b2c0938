import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestForAllowlist } from '../../src/attest/allowlist-digest.js';
import { readPrivateKey, signWithKey } from '../../src/fleet/signature.js';
import { addServer, auditEvents, cli, connectClient } from '../helpers/warden.js';
import { keyPair, machine, machineA, serverCopy, signedBundle, snapshot, tempDir, type KeyPair } from '../bundle/helpers.js';
import { member, readJson, type BundleJson } from '../helpers/json-docs.js';

// attack7: a signer (or a stolen key) trying to do more with `bundle apply` than docs/threat-model.md
// "What a trust bundle's signer can and cannot do" allows. Each test names the behaviour that should hold.

let root: string;
let script: string;
let homeA: string;
let key: KeyPair;
let bundle: string;
let n = 0;
const freshB = (): string => machine(root, `B${++n}`);

beforeAll(() => {
  root = tempDir('warden-attack7-');
  script = serverCopy(root);
  homeA = machineA(root, script);
  key = keyPair(root, 'signer');
  bundle = signedBundle(homeA, path.join(root, 'setup.bundle.json'), key);
});

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** What a signer can make: any valid bundle, here the good one changed by `mutate`, signed with the pinned key. */
function crafted(name: string, mutate: (doc: BundleJson) => void): string {
  const doc = readJson<BundleJson>(bundle);
  mutate(doc);
  const out = path.join(root, `${name}.bundle.json`);
  fs.writeFileSync(out, JSON.stringify(doc, null, 2) + '\n');
  // Signed the way anyone holding the key can, without `bundle sign` (which reads the bundle and may refuse it).
  const bytes = fs.readFileSync(out);
  fs.writeFileSync(`${out}.sigstore.json`, JSON.stringify(signWithKey(bytes, readPrivateKey(fs.readFileSync(key.priv, 'utf8'), key.priv), key.priv)));
  return out;
}

function renameServer(doc: BundleJson, from: string, to: string): void {
  const renamed = <T>(byId: Record<string, T>): Record<string, T> => Object.fromEntries(Object.entries(byId).map(([id, v]) => [id === from ? to : id, v]));
  doc.servers = renamed(doc.servers);
  doc.toolsLock = renamed(doc.toolsLock);
  doc.wardenLock = renamed(doc.wardenLock);
}

const allowlistOf = (home: string): { path: string; kind: string; sha256: string }[] =>
  (JSON.parse(fs.readFileSync(path.join(home, 'allowlist.json'), 'utf8')) as { entries: { path: string; kind: string; sha256: string }[] }).entries;

describe('attack7: a signer cannot change servers the bundle does not name', () => {
  it("apply leaves the allowlist entries of artifacts none of the bundle's servers runs as they were (an unnamed server's changed script stays refused)", async () => {
    // Machine B runs its own server 'other' (not in any bundle) from its own copy of the script.
    const dir = path.join(root, 'other-machine-b');
    fs.mkdirSync(dir);
    const otherScript = serverCopy(dir);
    const homeB = freshB();
    const add = addServer(homeB, 'other', ['node', otherScript]);
    expect(add.code).toBe(0);
    const before = allowlistOf(homeB).filter((e) => e.path.startsWith(path.dirname(otherScript)));
    expect(before.length).toBeGreaterThan(0);

    // Someone changes 'other''s script on B: `run` refuses it (DIGEST_MISMATCH) until an operator re-reviews it.
    fs.appendFileSync(otherScript, '\n// changed behind the operator\'s back\n');
    const changed = await Promise.all(before.map((e) => digestForAllowlist(e.path)));

    // The signer's bundle names only 'basic', but lists 'other''s artifacts with the changed digests.
    const evil = crafted('extra-artifacts', (doc) => {
      for (const d of changed) doc.artifacts.push({ path: d.path, kind: d.kind, accept: [d.sha256] });
    });
    expect(Object.keys(JSON.parse(fs.readFileSync(evil, 'utf8')).servers)).toEqual(['basic']);
    cli(homeB, ['bundle', 'apply', evil, '--key', key.pub, '--env', 'basic.SECRET_TOKEN=x']);
    const after = allowlistOf(homeB).filter((e) => e.path.startsWith(path.dirname(otherScript)));
    expect(after.map(({ path: p, kind, sha256 }) => ({ p, kind, sha256 }))).toEqual(before.map(({ path: p, kind, sha256 }) => ({ p, kind, sha256 })));
    // And so 'other' is still refused: the changed bytes no review on B admitted do not run.
    await expect(connectClient(homeB, 'other').then(({ client }) => client.close())).rejects.toThrow(/refused to launch server 'other'/);
  });
});

describe('attack7: a server id that is an Object.prototype key', () => {
  it("a server id 'constructor' gets no env value the operator did not give (BUNDLE_ENV_MISSING, nothing changed)", () => {
    const evil = crafted('constructor-name', (doc) => {
      renameServer(doc, 'basic', 'constructor');
      member(doc.servers, 'constructor').envNames = ['name'];
    });
    const homeB = freshB();
    const before = snapshot(homeB);
    const r = cli(homeB, ['bundle', 'apply', evil, '--key', key.pub]);
    const servers = JSON.parse(fs.readFileSync(path.join(homeB, 'servers.json'), 'utf8')) as { servers: Record<string, { env: Record<string, unknown> }> };
    expect(Object.hasOwn(servers.servers, 'constructor') ? servers.servers['constructor' as string]?.env : undefined).toBeUndefined();
    expect(r.stderr).toContain('BUNDLE_ENV_MISSING');
    expect(snapshot(homeB)).toEqual(before);
  });

  it("a bundle naming server 'constructor' cannot leave servers.json unreadable for the servers it does not name", () => {
    const homeB = freshB();
    const dir = path.join(root, 'own-machine-b');
    fs.mkdirSync(dir);
    expect(addServer(homeB, 'mine', ['node', serverCopy(dir)]).code).toBe(0);
    const evil = crafted('constructor-length', (doc) => {
      renameServer(doc, 'basic', 'constructor');
      member(doc.servers, 'constructor').envNames = ['length'];
    });
    cli(homeB, ['bundle', 'apply', evil, '--key', key.pub]);
    // The machine's own server must still be startable: servers.json must still be a valid file.
    const status = cli(homeB, ['status', '--json']);
    expect(status.stderr).not.toMatch(/SERVERS_INVALID|not a valid|expected string|invalid/i);
    expect(status.code).toBe(0);
  });
});

describe('attack7: a signer cannot read a machine\'s env values', () => {
  it('a bundle cannot make a server receive environment variables this machine never agreed to pass (passEnv needs the operator, like env names do)', () => {
    const evil = crafted('pass-env', (doc) => {
      member(doc.servers, 'basic').passEnv = ['AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'SSH_AUTH_SOCK'];
    });
    const homeB = freshB();
    const before = snapshot(homeB);
    const r = cli(homeB, ['bundle', 'apply', evil, '--key', key.pub, '--env', 'basic.SECRET_TOKEN=x']);
    expect(r.code).not.toBe(0);
    expect(snapshot(homeB)).toEqual(before);
    expect(auditEvents(homeB).at(-1)).toMatchObject({ event: 'bundle_rejected' });
  });
});

describe('attack7: a careless operator', () => {
  it('an --env for a server or an env name the bundle does not carry is refused (USAGE), not silently dropped', () => {
    const homeB = freshB();
    const before = snapshot(homeB);
    // A typo in the server id: the operator believes the value was set.
    const r = cli(homeB, ['bundle', 'apply', bundle, '--key', key.pub, '--env', 'basic.SECRET_TOKEN=x', '--env', 'bsic.SECRET_TOKEN=meant-for-basic', '--env', 'basic.SECRET_TOKN=typo']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('USAGE');
    expect(snapshot(homeB)).toEqual(before);
  });
});
