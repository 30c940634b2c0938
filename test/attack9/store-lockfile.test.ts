/* eslint-disable @typescript-eslint/no-explicit-any */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPrivateKey, signWithKey } from '../../src/fleet/signature.js';
import { variant } from '../attack4/common.js';
import { DEMO_DEP, storeMachines, storeNames, type StoreMachines } from '../bundle/store-helpers.js';
import { member, readJson, type BundleJson } from '../helpers/json-docs.js';

// ADR 0029 / threat model: a bundle's lockfile cannot "slip other code into the tree": only the dependencies the
// signed package.json declares, registry tarballs with integrity from this machine's own registry, never a place
// the signer names. The lockfile vetting checks `resolved`, `link`, a version string and an integrity, but not
// what npm makes of a lockfile entry without `resolved`: it installs `<name field>@<version field>` (arborist reify),
// so an entry `node_modules/<declared dep>` with `"name": "<another package>"` (an npm: alias) installs that other
// package, unsigned, where the signed package imports its declared dependency. The signer pins the resulting tree
// digest (it can compute it), so nothing refuses it, and no --allow-unsigned is asked for the code that runs.

const EVIL = '@mcp-warden-test/evil-dep';

let m: StoreMachines;
let demo: string;
beforeAll(async () => {
  m = await storeMachines('warden-attack9-lock-');
  demo = m.signed('demo', ['demo-server']);
}, 120_000);
afterAll(async () => m?.close());

/** The signer's edit of a bundle, re-signed with the pinned key. */
function resigned(file: string, name: string, edit: (doc: BundleJson, entry: string) => void): string {
  const doc = readJson<BundleJson>(file);
  edit(doc, Object.keys(doc.packages)[0] as string);
  const out = path.join(m.dir, `${name}.bundle.json`);
  const bytes = Buffer.from(JSON.stringify(doc, null, 2) + '\n');
  fs.writeFileSync(out, bytes);
  fs.writeFileSync(`${out}.sigstore.json`, JSON.stringify(signWithKey(bytes, readPrivateKey(fs.readFileSync(m.key.priv, 'utf8'), m.key.priv), m.key.priv)));
  return out;
}

/** The signer pins whatever tree its lockfile makes (it can compute that digest itself): the package tree's accepted digest and its warden.lock record. */
function pinTree(doc: BundleJson, sha256: string): void {
  const tree = doc.artifacts.find((a) => a.kind === 'package');
  if (!tree) throw new Error('the bundle has no package tree artifact');
  tree.accept = [sha256];
  for (const e of Object.values(doc.wardenLock)) for (const a of e.artifacts) if (a.kind === 'package') a.sha256 = sha256;
}

describe('a bundle lockfile installs only registry packages under their own names', () => {
  it('an npm alias (a lockfile entry whose `name` is another package) in place of a declared dependency is refused', async () => {
    const evil = m.reg.publish(EVIL, '1.0.0', { tarball: variant(DEMO_DEP, '1.0.0', { name: EVIL }, { 'index.mjs': 'export function echo() { return "not the declared dependency"; }\n' }), attestations: 'none' });
    const edit = (doc: BundleJson, entry: string): void => {
      member(doc.packages, entry).lockfile.packages[`node_modules/${DEMO_DEP}`] = { name: EVIL, version: '1.0.0', integrity: evil.integrity, license: 'Apache-2.0' };
    };
    // The signer learns the digest of the tree its lockfile makes (here: from B's refusal; it could install it itself).
    const probe = m.run(m.freshB(), ['bundle', 'apply', resigned(demo, 'alias-probe', edit), '--key', m.key.pub]);
    const digest = /hashes to sha256 ([0-9a-f]{64})/.exec(probe.stderr)?.[1];
    const file = resigned(demo, 'alias', (doc, entry) => {
      edit(doc, entry);
      if (digest) pinTree(doc, digest);
    });
    const homeB = m.freshB();
    const r = m.run(homeB, ['bundle', 'apply', file, '--key', m.key.pub]);
    // Either the signer learnt the digest (the alias reached npm), or the bundle was refused before anything ran.
    expect(digest ?? probe.stderr).toMatch(/^[0-9a-f]{64}$|BUNDLE_INVALID: .*an alias of another package/);
    expect(r.code, r.stderr).not.toBe(0);
    expect(r.stderr).toMatch(/BUNDLE_INVALID: .*\/name: an alias of another package/);
    const entries = storeNames(homeB);
    for (const e of entries) expect(fs.readFileSync(path.join(homeB, 'store', e, 'node_modules', DEMO_DEP, 'index.mjs'), 'utf8')).not.toContain('not the declared dependency');
  }, 120_000);
});
