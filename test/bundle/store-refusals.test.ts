import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WardenError } from '../../src/error.js';
import { readPrivateKey, signWithKey } from '../../src/fleet/signature.js';
import { parseBundle } from '../../src/store/bundle/format.js';
import { identityFor } from '../helpers/provenance-registry.js';
import { auditEvents } from '../helpers/warden.js';
import { variant } from '../attack4/common.js';
import { DEMO_DEP, DEMO_SERVER, publishNewerDependency, publishRanged, refusedWithNothingChanged, storeMachines, storeNames, type StoreMachines } from './store-helpers.js';
import { member, readJson, type AllowlistJson, type BundleJson } from '../helpers/json-docs.js';

// Issue 15 (docs/adr/0029): each way a store server of a bundle can fail to reproduce on machine B is refused
// before B's trust files change, with B's store as it was (an entry made for a refused apply is removed), and
// audited. The signer names a package and a publisher; the package must still verify on B.


let m: StoreMachines;
let demo: string;
beforeAll(async () => {
  m = await storeMachines('warden-store-refusals-');
  demo = m.signed('demo', ['demo-server']);
}, 120_000);
afterAll(async () => m?.close());

/** A copy of a bundle with `edit` applied to its JSON, signed again with the trusted key: what its signer can do
 *  (`bundle sign` itself signs only valid bundles). */
function resigned(file: string, name: string, edit: (doc: BundleJson) => void): string {
  const doc = readJson<BundleJson>(file);
  edit(doc);
  const out = path.join(m.dir, `${name}.bundle.json`);
  const bytes = Buffer.from(JSON.stringify(doc, null, 2) + '\n');
  fs.writeFileSync(out, bytes);
  fs.writeFileSync(`${out}.sigstore.json`, JSON.stringify(signWithKey(bytes, readPrivateKey(fs.readFileSync(m.key.priv, 'utf8'), m.key.priv), m.key.priv)));
  return out;
}

describe('bundle apply refuses a store server that does not verify here, with nothing changed', () => {
  afterEach(() => void m.reg.publish(DEMO_SERVER, '1.0.0')); // the genuine release again

  it('a registry that serves other bytes than the integrity the bundle names', () => {
    m.reg.publish(DEMO_SERVER, '1.0.0', { swapTarball: 'recomputed' });
    expect(refusedWithNothingChanged(m, m.freshB(), demo, [], 'INTEGRITY_MISMATCH')).toMatch(/server 'demo-server' of the trust bundle: the registry names sha512-\S+ as the sha512 of @mcp-warden-test\/demo-server@1\.0\.0, not sha512-\S+ as pinned/);
    m.reg.publish(DEMO_SERVER, '1.0.0', { swapTarball: 'stale' });
    refusedWithNothingChanged(m, m.freshB(), demo, [], 'INTEGRITY_MISMATCH');
  });

  it('provenance signed by another publisher than the bundle pins', () => {
    m.reg.publish(DEMO_SERVER, '1.0.0', { identity: { ...identityFor(DEMO_SERVER, '1.0.0'), repository: 'https://github.com/mallory/demo-server' } });
    expect(refusedWithNothingChanged(m, m.freshB(), demo, [], 'IDENTITY_MISMATCH')).toMatch(/built by https:\/\/github\.com\/mallory\/demo-server .*not by https:\/\/github\.com\/mcp-warden-test\/demo-server .*as the bundle pins/);
  });

  it('no provenance at all for a package the bundle pins a publisher for', () => {
    m.reg.publish(DEMO_SERVER, '1.0.0', { attestations: 'none' });
    expect(refusedWithNothingChanged(m, m.freshB(), demo, [], 'PROVENANCE_MISSING')).toContain('the bundle pins its publisher');
  });
});

describe('bundle apply: the store lockfile the bundle carries', () => {
  let ranged: string;
  beforeAll(() => {
    publishRanged(m.reg, '1.2.0');
    const r = m.run(m.homeA, ['install', `${DEMO_SERVER}@1.2.0`, '--id', 'ranged', '--yes']);
    if (r.code !== 0) throw new Error(`install failed: ${r.stderr}`);
    ranged = m.signed('ranged', ['ranged']);
  }, 60_000);

  it('re-signed to resolve another dependency version, its tree does not reproduce: refused, and the entry made for it removed', () => {
    const newer = publishNewerDependency(m.reg);
    const file = resigned(ranged, 'ranged-newer-dep', (doc) => {
      const [entry] = Object.keys(doc.packages);
      if (entry === undefined) throw new Error('the signed bundle holds no package');
      const dep = member(member(doc.packages, entry).lockfile.packages, `node_modules/${DEMO_DEP}`);
      Object.assign(dep, { version: '1.0.1', integrity: newer.integrity });
    });
    const err = refusedWithNothingChanged(m, m.freshB(), file, [], 'BUNDLE_DIGEST_MISMATCH');
    expect(err).toMatch(/the package tree of @mcp-warden-test\/demo-server@1\.2\.0 that npm installed here from the bundle's lockfile hashes to sha256 [0-9a-f]{64}, not [0-9a-f]{64} as the trust bundle pins/);
  }, 60_000);

  it('one that would take a package from a registry URL is not a valid bundle', () => {
    const file = resigned(ranged, 'ranged-resolved', (doc) => {
      const [entry] = Object.keys(doc.packages);
      if (entry === undefined) throw new Error('the signed bundle holds no package');
      member(member(doc.packages, entry).lockfile.packages, `node_modules/${DEMO_DEP}`).resolved = 'https://evil.example/demo-dep-1.0.0.tgz';
    });
    const homeB = m.freshB();
    const r = m.run(homeB, ['bundle', 'apply', file, '--key', m.key.pub]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('BUNDLE_INVALID');
    expect(r.stderr).toContain('/resolved: a bundle carries no registry URL');
    expect(storeNames(homeB)).toEqual([]);
  });
});

describe('bundle apply: a package admitted without provenance', () => {
  let unsigned: string;
  beforeAll(() => {
    m.reg.publish(DEMO_SERVER, '1.3.0', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.3.0' }), attestations: 'none' });
    const r = m.run(m.homeA, ['install', `${DEMO_SERVER}@1.3.0`, '--id', 'unsigned', '--allow-unsigned', '--yes']);
    if (r.code !== 0) throw new Error(`install failed: ${r.stderr}`);
    unsigned = m.signed('unsigned', ['unsigned']);
  }, 60_000);

  it('the bundle says so', () => {
    const [p] = Object.values(readJson<BundleJson>(unsigned).packages);
    expect(p).toMatchObject({ name: DEMO_SERVER, version: '1.3.0', unsigned: '--allow-unsigned' });
    expect(p?.identity).toBeUndefined();
  });

  it('is refused unless this machine agrees, naming the flag', () => {
    expect(refusedWithNothingChanged(m, m.freshB(), unsigned, [], 'PROVENANCE_MISSING')).toContain('apply with --allow-unsigned unsigned (audited)');
  });

  it('is installed with --allow-unsigned SERVER, and the agreement is audited', () => {
    const homeB = m.freshB();
    const r = m.run(homeB, ['bundle', 'apply', unsigned, '--key', m.key.pub, '--allow-unsigned', 'unsigned']);
    expect(r.code, r.stderr).toBe(0);
    expect(auditEvents(homeB).find((e) => e.event === 'unsigned_admitted')).toMatchObject({ server: 'unsigned', package: DEMO_SERVER, version: '1.3.0', how: '--allow-unsigned', by: 'bundle apply' });
    const tree = readJson<AllowlistJson>(path.join(homeB, 'allowlist.json')).entries.find((e) => e.kind === 'package');
    expect(tree?.provenance).toMatchObject({ package: `${DEMO_SERVER}@1.3.0`, unsigned: '--allow-unsigned' });
  }, 60_000);

  it('--allow-unsigned for a server the bundle does not carry unsigned is a usage error', () => {
    const homeB = m.freshB();
    const r = m.run(homeB, ['bundle', 'apply', demo, '--key', m.key.pub, '--allow-unsigned', 'demo-server']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--allow-unsigned demo-server: the trust bundle has no server 'demo-server' installed from a package admitted without provenance");
    expect(storeNames(homeB)).toEqual([]);
  });
});

describe('bundle format: what a store server carries is read strictly', () => {
  /** The refusal of `demo` with `edit` applied (parsed in process: what verify and apply read after the signature). */
  function refusal(edit: (doc: BundleJson, entry: string) => void): string {
    const doc = readJson<BundleJson>(demo);
    edit(doc, Object.keys(doc.packages)[0] as string);
    try {
      parseBundle(Buffer.from(JSON.stringify(doc)), 'b.json');
    } catch (err) {
      if (err instanceof WardenError && err.code === 'BUNDLE_INVALID') return err.message;
      throw err;
    }
    throw new Error('expected BUNDLE_INVALID');
  }

  it('a lockfile package no dependency of the server leads to (its tree digest would not cover it)', () => {
    expect(refusal((doc, entry) => (member(doc.packages, entry).lockfile.packages['node_modules/extra'] = { version: '1.0.0', integrity: member(doc.packages, entry).integrity }))).toContain('/lockfile/packages/node_modules~1extra: no dependency of @mcp-warden-test/demo-server leads to it');
  });

  it('a store path that leads out of its entry, or into an entry the bundle does not carry', () => {
    expect(refusal((doc, entry) => (member(doc.servers, 'demo-server').args[0] = `store:${entry}/../../etc/passwd`))).toContain('/servers/demo-server/args/0: "store:');
    expect(refusal((doc) => (member(doc.servers, 'demo-server').args[0] = 'store:other@1.0.0-0123456789ab/server.mjs'))).toContain('/servers/demo-server/args/0: the store entry other@1.0.0-0123456789ab is not among /packages');
  });

  it('a package other than the one its server names, or one that names no publisher though its server requires provenance', () => {
    expect(refusal((doc, entry) => (member(doc.packages, entry).integrity = `sha512-${'A'.repeat(86)}==`))).toContain('/servers/demo-server/package: not the package');
    expect(refusal((doc, entry) => delete member(doc.packages, entry).identity)).toMatch(/provenance: "required", but \/packages\/\S+ names no publisher/);
  });

  it('a store artifact left to the machine instead of pinned', () => {
    const machineLocal = (kind: string) => (doc: BundleJson) => {
      const a = doc.artifacts.find((x) => x.kind === kind);
      if (!a) throw new Error(`the bundle has no ${kind} artifact`);
      delete a.accept;
      a.machineLocal = true;
    };
    expect(refusal(machineLocal('package'))).toMatch(/\/artifacts pins no package tree store:\S+\/node_modules\/@mcp-warden-test\/demo-server\. /);
    expect(refusal(machineLocal('script'))).toMatch(/the script store:\S+\/server\.mjs is in the store, so it is pinned, never machine-local/);
  });
});
