import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestForAllowlist } from '../../src/attest/allowlist-digest.js';
import { NODE, auditEvents, cli, connectClient } from '../helpers/warden.js';
import { SECRET, keyPair, machine, machineA, serverCopy, signedBundle, snapshot, tempDir, type KeyPair } from './helpers.js';

// Issue 15: a bundle made on one machine (home A) applies on another (home B), and every way it can be wrong
// is refused with the trust files of B unchanged, byte for byte, and the refusal audited.

let root: string;
let script: string;
let homeA: string;
let key: KeyPair;
let bundle: string;
let n = 0;
const freshB = (): string => machine(root, `B${++n}`);

beforeAll(() => {
  root = tempDir('warden-bundle-');
  script = serverCopy(root);
  homeA = machineA(root, script);
  key = keyPair(root, 'signer');
  bundle = signedBundle(homeA, path.join(root, 'setup.bundle.json'), key);
});

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function refusedWithNothingChanged(home: string, file: string, flags: string[], code: string): string {
  const before = snapshot(home);
  const r = cli(home, ['bundle', 'apply', file, ...flags]);
  expect(r.stderr).toContain(code);
  expect(r.code).toBe(3);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  expect(snapshot(home)).toEqual(before);
  expect(auditEvents(home).at(-1)).toMatchObject({ event: 'bundle_rejected', reason: code });
  return r.stderr;
}

describe('bundle apply: two machines', () => {
  it('a bundle created on one home applies on another, and the server runs there with the same digests and lock', async () => {
    const homeB = freshB();
    const r = cli(homeB, ['bundle', 'apply', bundle, '--key', key.pub, '--env', 'basic.SECRET_TOKEN=machine-b-value']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const f of ['tools.lock', 'warden.lock']) expect(fs.readFileSync(path.join(homeB, f), 'utf8')).toBe(fs.readFileSync(path.join(homeA, f), 'utf8'));
    const digests = (home: string): unknown => (JSON.parse(fs.readFileSync(path.join(home, 'allowlist.json'), 'utf8')) as { entries: { path: string; kind: string; sha256: string }[] }).entries.map(({ path: p, kind, sha256 }) => ({ p, kind, sha256 }));
    expect(digests(homeB)).toEqual(digests(homeA));
    const serverB = JSON.parse(fs.readFileSync(path.join(homeB, 'servers.json'), 'utf8')) as { servers: Record<string, { env: Record<string, string> }> };
    expect(serverB.servers.basic?.env).toEqual({ SECRET_TOKEN: 'machine-b-value' });

    const { client } = await connectClient(homeB, 'basic');
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo', 'env']);
      const res = (await client.callTool({ name: 'env', arguments: { name: 'SECRET_TOKEN' } })) as { content: { text: string }[] };
      expect(JSON.parse(res.content[0]?.text ?? '{}')).toMatchObject({ SECRET_TOKEN: 'machine-b-value' });
    } finally {
      await client.close();
    }
    const applied = auditEvents(homeB).find((e) => e.event === 'bundle_applied');
    expect(applied).toMatchObject({ servers: ['basic'], rollback: false });
    expect(typeof applied?.serial).toBe('number');
  });

  it('env values never travel in a bundle: only their names', () => {
    const text = fs.readFileSync(bundle, 'utf8');
    expect(text).not.toContain(SECRET);
    expect(JSON.parse(text).servers.basic.envNames).toEqual(['SECRET_TOKEN']);
    expect(JSON.parse(text).servers.basic.env).toBeUndefined();
  });

  it('an env name this machine has no value for is refused, naming the flag that gives one', () => {
    expect(refusedWithNothingChanged(freshB(), bundle, ['--key', key.pub], 'BUNDLE_ENV_MISSING')).toContain('--env basic.SECRET_TOKEN=VALUE');
  });

  it('a tampered bundle is refused with nothing changed', () => {
    const tampered = path.join(root, 'tampered.bundle.json');
    fs.writeFileSync(tampered, fs.readFileSync(bundle, 'utf8').replace('"posture": "enforce"', '"posture": "monitor"'));
    fs.copyFileSync(`${bundle}.sigstore.json`, `${tampered}.sigstore.json`);
    refusedWithNothingChanged(freshB(), tampered, ['--key', key.pub, '--env', 'basic.SECRET_TOKEN=x'], 'BUNDLE_SIGNATURE_INVALID');
  });

  it('a bundle signed by another key than the pinned one is refused with nothing changed', () => {
    const other = keyPair(root, 'intruder');
    const foreign = signedBundle(homeA, path.join(root, 'foreign.bundle.json'), other);
    refusedWithNothingChanged(freshB(), foreign, ['--key', key.pub, '--env', 'basic.SECRET_TOKEN=x'], 'BUNDLE_UNTRUSTED_SIGNER');
  });

  it('a bundle without its signature beside it is refused', () => {
    const unsigned = path.join(root, 'unsigned.bundle.json');
    expect(cli(homeA, ['bundle', 'create', '--out', unsigned]).code).toBe(0);
    refusedWithNothingChanged(freshB(), unsigned, ['--key', key.pub, '--env', 'basic.SECRET_TOKEN=x'], 'BUNDLE_SIGNATURE_INVALID');
  });

  it('an older serial is refused; --allow-rollback admits it, and the audit says it was a rollback', () => {
    const newer = signedBundle(homeA, path.join(root, 'serial-200.json'), key, ['--serial', '200']);
    const older = signedBundle(homeA, path.join(root, 'serial-100.json'), key, ['--serial', '100']);
    const homeB = freshB();
    const env = ['--env', 'basic.SECRET_TOKEN=x'];
    expect(cli(homeB, ['bundle', 'apply', newer, '--key', key.pub, ...env]).code).toBe(0);
    refusedWithNothingChanged(homeB, older, ['--key', key.pub, ...env], 'BUNDLE_ROLLBACK');
    refusedWithNothingChanged(homeB, newer, ['--key', key.pub, ...env], 'BUNDLE_ROLLBACK'); // the same serial again
    const r = cli(homeB, ['bundle', 'apply', older, '--key', key.pub, '--allow-rollback', ...env]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('ROLLBACK');
    expect(auditEvents(homeB).at(-1)).toMatchObject({ event: 'bundle_applied', serial: 100, previousSerial: 200, rollback: true });
    expect(JSON.parse(fs.readFileSync(path.join(homeB, 'bundle-state.json'), 'utf8')).applied.serial).toBe(100);
  });

  it('an artifact whose digest does not reproduce on this machine is refused with nothing changed', () => {
    const original = fs.readFileSync(script);
    fs.appendFileSync(script, '\n// changed on machine B\n');
    try {
      expect(refusedWithNothingChanged(freshB(), bundle, ['--key', key.pub, '--env', 'basic.SECRET_TOKEN=x'], 'BUNDLE_DIGEST_MISMATCH')).toMatch(/the (script|package) \/\S+ hashes to sha256 [0-9a-f]{64} on this machine, expected/);
    } finally {
      fs.writeFileSync(script, original);
    }
  });

  it('an artifact may have any of the digests the bundle accepts (another machine\'s build), and that one is allowlisted', async () => {
    const original = fs.readFileSync(script);
    const changed = Buffer.concat([original, Buffer.from('\n// the build machine B runs\n')]);
    fs.writeFileSync(script, changed);
    const other = [await digestForAllowlist(script), await digestForAllowlist(path.dirname(script))];
    fs.writeFileSync(script, original);
    const multi = signedBundle(homeA, path.join(root, 'accept.json'), key, other.flatMap((d) => ['--accept', `${d.path}=${d.sha256}`]));
    fs.writeFileSync(script, changed);
    try {
      const homeB = freshB();
      const r = cli(homeB, ['bundle', 'apply', multi, '--key', key.pub, '--env', 'basic.SECRET_TOKEN=x']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const entries = (JSON.parse(fs.readFileSync(path.join(homeB, 'allowlist.json'), 'utf8')) as { entries: { path: string; sha256: string }[] }).entries;
      for (const d of other) expect(entries.find((e) => e.path === d.path)?.sha256).toBe(d.sha256);
    } finally {
      fs.writeFileSync(script, original);
    }
  });

  it("a machine-local interpreter is left to this machine's own allowlist: refused until it trusts it, then applied", () => {
    const local = signedBundle(homeA, path.join(root, 'machine-local.json'), key, ['--machine-local', NODE]);
    const artifact = (JSON.parse(fs.readFileSync(local, 'utf8')) as { artifacts: { path: string }[] }).artifacts.find((a) => a.path === NODE);
    expect(artifact).toEqual({ path: NODE, kind: 'executable', machineLocal: true });
    const homeB = freshB();
    const env = ['--env', 'basic.SECRET_TOKEN=x'];
    refusedWithNothingChanged(homeB, local, ['--key', key.pub, ...env], 'BUNDLE_MACHINE_LOCAL_UNTRUSTED');
    expect(cli(homeB, ['allowlist', 'add', NODE]).code).toBe(0);
    expect(cli(homeB, ['bundle', 'apply', local, '--key', key.pub, ...env]).code).toBe(0);
  });
});

describe('bundle verify and sign', () => {
  it('verify names the signer of a good bundle and refuses a wrong key (exit 3)', () => {
    const ok = cli(homeA, ['bundle', 'verify', bundle, '--key', key.pub]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('OK:');
    const other = keyPair(root, 'other-verify');
    const bad = cli(homeA, ['bundle', 'verify', bundle, '--key', other.pub]);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('BUNDLE_UNTRUSTED_SIGNER');
  });

  it('an Ed25519 key signs and verifies as well as an ECDSA P-256 one', () => {
    const ed = keyPair(root, 'ed', 'ed25519');
    const file = signedBundle(homeA, path.join(root, 'ed.bundle.json'), ed);
    expect(cli(homeA, ['bundle', 'verify', file, '--key', ed.pub]).code).toBe(0);
    fs.appendFileSync(file, ' ');
    expect(cli(homeA, ['bundle', 'verify', file, '--key', ed.pub]).stderr).toContain('BUNDLE_SIGNATURE_INVALID');
  });

  it('a key-signed bundle is refused when a keyless identity is pinned', () => {
    const r = cli(homeA, ['bundle', 'verify', bundle, '--identity', 'https://github.com/acme/*', '--issuer', 'https://token.actions.githubusercontent.com']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('BUNDLE_UNTRUSTED_SIGNER');
  });
});

describe('bundle create: servers installed into the store', () => {
  it('a server whose store entry is missing here cannot be bundled, and no bundle is written', () => {
    const script2 = serverCopyFor('store-case');
    const homeS = machineA(path.dirname(path.dirname(script2)), script2);
    const file = path.join(homeS, 'servers.json');
    const servers = JSON.parse(fs.readFileSync(file, 'utf8'));
    servers.servers.basic.package = { name: '@acme/basic', version: '1.0.0', integrity: `sha512-${'A'.repeat(86)}==`, store: '@acme+basic@1.0.0-0123456789ab' };
    fs.writeFileSync(file, JSON.stringify(servers, null, 2));
    const out = path.join(root, 'store.bundle.json');
    const r = cli(homeS, ['bundle', 'create', '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('BUNDLE_INVALID');
    expect(r.stderr).toContain("server 'basic' runs from the store entry");
    expect(fs.existsSync(out)).toBe(false);
  });
});

/** A second copy of the server in its own directory (machineA names its home "A" inside `dir`). */
function serverCopyFor(name: string): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir);
  return serverCopy(dir);
}

describe('bundle apply: what runs here', () => {
  it("a command that resolves to another file through this machine's trusted PATH is refused with nothing changed", () => {
    const homeB = freshB();
    const bin = path.join(root, `other-bin-${n}`);
    fs.mkdirSync(bin);
    fs.copyFileSync('/bin/true', path.join(bin, 'node')); // another "node" first on this machine's PATH
    fs.chmodSync(path.join(bin, 'node'), 0o755);
    const file = path.join(homeB, 'servers.json');
    const own = JSON.parse(fs.readFileSync(file, 'utf8'));
    own.path = `${bin}:${own.path}`;
    fs.writeFileSync(file, JSON.stringify(own, null, 2));
    const stderr = refusedWithNothingChanged(homeB, bundle, ['--key', key.pub, '--env', 'basic.SECRET_TOKEN=x'], 'BUNDLE_DIGEST_MISMATCH');
    expect(stderr).toContain(`would run the executable ${path.join(bin, 'node')} on this machine`);
  });
});
