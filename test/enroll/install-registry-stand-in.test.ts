import crypto from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageJsonOf, pack } from '../helpers/npm-pack.mjs';
import { DEMO_SERVER, fixtureDir, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { tempDir } from '../helpers/warden.js';
import { member } from '../helpers/json-docs.js';

// The registry stand-in the install tests depend on, checked for the protocol details they rely on (and npm
// does): the packument as npm asks for it, the attestations endpoint named in it (a scoped name percent-encoded
// as the registry writes it), a catalog re-read on every request, catalog packages winning over node_modules
// ones, and deterministic packing. The attestations served are the provenance registry's genuine ones.

const INSTALL_ACCEPT = 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*';

let dir: string;
let reg: ProvenanceRegistry;
beforeAll(async () => {
  dir = tempDir('warden-registry-');
  reg = await startProvenanceRegistry(dir);
});
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

const get = async (url: string) => {
  const res = await fetch(url, { headers: { accept: INSTALL_ACCEPT } });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
};
/** A packument as the stand-in serves it: the members the tests read. */
interface Packument {
  'dist-tags': Record<string, string>;
  versions: Record<string, Record<string, unknown> & { dist: { tarball: string; integrity: string; attestations?: { url: string } } }>;
}
const packument = async (name: string): Promise<Packument> => JSON.parse((await get(`${reg.url}/${name.replace('/', '%2f')}`)).body.toString()) as Packument;

describe('the registry stand-in', () => {
  it('answers npm\'s packument request with each version\'s manifest read from its tarball, and dist naming the attestations endpoint', async () => {
    const published = reg.publish(DEMO_SERVER, '1.0.0');
    const doc = await packument(DEMO_SERVER);
    expect(doc['dist-tags']).toEqual({ latest: '1.0.0' });
    const v = member(doc.versions, '1.0.0');
    expect(v).toMatchObject({ name: DEMO_SERVER, version: '1.0.0', _id: `${DEMO_SERVER}@1.0.0`, bin: { 'demo-server': 'server.mjs' } });
    expect(v.dist).toEqual({
      tarball: `${reg.url}/${DEMO_SERVER}/-/demo-server-1.0.0.tgz`,
      integrity: published.integrity,
      shasum: crypto.createHash('sha1').update(published.tarball).digest('hex'),
      attestations: { url: `${reg.url}/-/npm/v1/attestations/@mcp-warden-test%2fdemo-server@1.0.0`, provenance: { predicateType: 'https://slsa.dev/provenance/v1' } },
    });
    expect((await get(v.dist.tarball)).body.equals(published.tarball)).toBe(true);
    const attestations = await get(String(v.dist.attestations?.url));
    expect([attestations.status, JSON.parse(attestations.body.toString())]).toEqual([200, published.attestations]);
    expect(reg.requests()).toContain(`GET /-/npm/v1/attestations/${DEMO_SERVER}@1.0.0 200`);
  });

  it('serves what is published mid-test at once: a new version, dist-tags, a version without attestations, swapped bytes', async () => {
    reg.publish(DEMO_SERVER, '1.1.0', { attestations: 'none' });
    let doc = await packument(DEMO_SERVER);
    expect(doc['dist-tags'].latest).toBe('1.1.0');
    expect(member(doc.versions, '1.1.0').dist.attestations).toBeUndefined();
    expect((await get(`${reg.url}/-/npm/v1/attestations/@mcp-warden-test%2fdemo-server@1.1.0`)).status).toBe(404);

    const swapped = reg.publish(DEMO_SERVER, '1.1.0', { swapTarball: 'stale', distTags: { latest: '1.0.0', next: '1.1.0' } });
    doc = await packument(DEMO_SERVER);
    expect(doc['dist-tags']).toEqual({ latest: '1.0.0', next: '1.1.0' });
    expect(member(doc.versions, '1.1.0').dist.integrity).toBe(swapped.integrity);
    const served = (await get(member(doc.versions, '1.1.0').dist.tarball)).body;
    expect(served.equals(swapped.swapped as Buffer)).toBe(true);
    expect(packageJsonOf(served)).toMatchObject({ name: DEMO_SERVER, version: '1.1.0' });

    reg.unpublish(DEMO_SERVER, '1.1.0');
    expect(Object.keys((await packument(DEMO_SERVER)).versions)).toEqual(['1.0.0']);
  });

  it('lets a catalog package win over the node_modules one of the same name, and still serves the others', async () => {
    reg.publish('semver', '99.0.0', { attestations: 'none', tarball: pack(fixtureDir(DEMO_SERVER, '1.0.0'), { replace: { 'package.json': JSON.stringify({ name: 'semver', version: '99.0.0' }) } }) });
    expect(Object.keys((await packument('semver')).versions)).toEqual(['99.0.0']);
    reg.unpublish('semver');
    expect(Object.keys((await packument('semver')).versions)).not.toContain('99.0.0');
    expect((await get(`${reg.url}/no-such-package-here`)).status).toBe(404);
  });

  it('packs a package directory deterministically, and reads its package.json back', () => {
    const a = pack(fixtureDir(DEMO_SERVER, '1.0.0'));
    expect(pack(fixtureDir(DEMO_SERVER, '1.0.0')).equals(a)).toBe(true);
    expect(packageJsonOf(a)).toEqual(JSON.parse(fs.readFileSync(`${fixtureDir(DEMO_SERVER, '1.0.0')}/package.json`, 'utf8')));
  });
});
