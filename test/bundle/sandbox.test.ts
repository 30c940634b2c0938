import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPrivateKey, signWithKey } from '../../src/fleet/signature.js';
import { cli, connectClient, launchCount, sessionLaunch } from '../helpers/warden.js';
import { keyPair, machine, sharedMachineA, signedBundle, tempDir, type KeyPair } from './helpers.js';

// Issue 29: a server's sandbox travels with its bundle, pinned: the receiving home runs the server confined as
// the signer reviewed it, and a bundle whose sandbox (or rules) is not the one its warden.lock entry pins is
// refused whole: the hashes of a bundle add up, as its lock entries' do.

let root: string;
let homeA: string;
let key: KeyPair;
let bundle: string;
beforeAll(() => {
  if (!['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'].some((f) => fs.existsSync(f))) throw new Error('bubblewrap (bwrap) is missing on this host: apt-get install bubblewrap (README, "Test")');
  root = tempDir('warden-bundle-sandbox-');
  homeA = sharedMachineA(root).homeA;
  const set = cli(homeA, ['sandbox', 'basic', '--network', 'none']);
  expect(set.code, set.stderr).toBe(0);
  key = keyPair(root, 'signer');
  bundle = signedBundle(homeA, path.join(root, 'setup.bundle.json'), key);
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const serversOf = (home: string): Record<string, { sandbox?: unknown }> => (JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')) as { servers: Record<string, { sandbox?: unknown }> }).servers;

describe("a bundle carries its servers' sandboxes", () => {
  it('applied on another home, the server has the same sandbox, pinned, and runs confined there', async () => {
    const homeB = machine(root, 'B');
    const r = cli(homeB, ['bundle', 'apply', bundle, '--key', key.pub, '--env', 'basic.SECRET_TOKEN=b']);
    expect(r.code, r.stderr).toBe(0);
    expect(serversOf(homeB).basic?.sandbox).toEqual(serversOf(homeA).basic?.sandbox);
    const after = launchCount(homeB, 'basic');
    const { client } = await connectClient(homeB, 'basic');
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo', 'env']);
    } finally {
      await client.close();
    }
    const launch = await sessionLaunch(homeB, { server: 'basic', after });
    expect(launch).toMatchObject({ decision: 'allow', sandbox: { state: 'confined', network: 'none' } });
  });

  it.each([
    ['a sandbox with a wider network', 'sandbox', { network: 'any' }],
    ['no sandbox at all', 'sandbox', undefined],
    ['rules its entry pins none of', 'rules', { mode: 'strict' }],
  ])('a signed bundle carrying %s, not what its warden.lock entry pins, is refused whole, nothing applied', (what, member, value) => {
    const out = path.join(root, `changed-${what.replace(/\W/g, '-')}.bundle.json`);
    const c = cli(homeA, ['bundle', 'create', '--out', out]);
    expect(c.code, c.stderr).toBe(0);
    const doc = JSON.parse(fs.readFileSync(out, 'utf8')) as { servers: Record<string, Record<string, unknown>> };
    const server = doc.servers.basic as Record<string, unknown>;
    if (value === undefined) delete server[member];
    else server[member] = value;
    // signed by the trusted key as it is (`bundle sign` itself refuses to sign such a bundle)
    const bytes = Buffer.from(JSON.stringify(doc));
    fs.writeFileSync(out, bytes);
    fs.writeFileSync(`${out}.sigstore.json`, JSON.stringify(signWithKey(bytes, readPrivateKey(fs.readFileSync(key.priv, 'utf8'), key.priv), key.priv)));
    expect(cli(homeA, ['bundle', 'sign', out, '--key', key.priv]).stderr).toMatch(new RegExp(`BUNDLE_INVALID: .*server 'basic'.*${member}`));
    const homeB = machine(root, `B-${what.replace(/\W/g, '-')}`);
    const r = cli(homeB, ['bundle', 'apply', out, '--key', key.pub, '--env', 'basic.SECRET_TOKEN=b']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`BUNDLE_INVALID: .*server 'basic'.*${member}`));
    expect(fs.existsSync(path.join(homeB, 'warden.lock'))).toBe(false);
    expect(serversOf(homeB)).toEqual({});
  });
});
