import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_DEP, DEMO_SERVER, identityFor, packFixture, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { GITHUB_ISSUER } from '../helpers/sigstore-pki.js';
import { treeSnapshot } from '../helpers/tree-snapshot.js';
import { auditEvents, cli, connectClient, NODE, tempDir, type CliResult } from '../helpers/warden.js';
import { member, readJson, type AllowlistJson, type InstallJson, type PackageLockJson, type ServerJson, type ServersJson } from '../helpers/json-docs.js';

// `mcp-warden install` end to end: the built CLI against the loopback registry stand-in (packument, tarball and
// attestations endpoint, the real protocol), npm installing from it too, and a local test sigstore instance in
// the home's trust-root.json. What each locally signed bundle stands for:
//   - demo-server and demo-dep (published by startProvenanceRegistry): the npm publish attestation is the
//     registry's word that it accepted exactly that tarball; the SLSA provenance is GitHub Actions' word that the
//     release workflow of github.com/mcp-warden-test/<package>, at tag v<version>, built it. Both are signed by the
//     test instance the home trusts, for the sha512 of the very tarball served: a genuine release.
//   - demo-server 1.1.0 here is published without attestations: a package released without provenance, or a
//     registry that strips them; its genuine attestations are then handed over with --attestations FILE.

const SERVER_REPO = identityFor(DEMO_SERVER, '1.0.0');
const sha512 = (b: Buffer) => crypto.createHash('sha512').update(b).digest();
const INTEGRITY = `sha512-${sha512(packFixture(DEMO_SERVER, '1.0.0')).toString('base64')}`;
const ENTRY = `@mcp-warden-test+demo-server@1.0.0-${sha512(packFixture(DEMO_SERVER, '1.0.0')).toString('hex').slice(0, 12)}`;

const serverEntry = (home: string, id: string): ServerJson => member(readJson<ServersJson>(path.join(home, 'servers.json')).servers, id);

let dir: string;
let reg: ProvenanceRegistry;
beforeAll(async () => {
  dir = tempDir('warden-install-');
  reg = await startProvenanceRegistry(dir);
});
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe('install: a package published with provenance', () => {
  let home: string;
  let installed: CliResult;
  beforeAll(() => {
    home = path.join(dir, 'home');
    reg.trustHome(home);
    // demo-server 1.0.0 and demo-dep 1.0.0 as startProvenanceRegistry published them: genuine releases.
    installed = cli(home, ['install', DEMO_SERVER, '--yes'], { env: reg.env });
  });
  const store = () => path.join(home, 'store', ENTRY);
  const pkgDir = () => path.join(store(), 'node_modules', DEMO_SERVER);

  it('resolves the name to one exact version and shows its integrity, who built it and the dependencies\' provenance', () => {
    expect(installed.code, installed.stderr).toBe(0);
    const out = installed.stdout;
    expect(out).toContain(`Package     ${DEMO_SERVER}@1.0.0\n`);
    expect(out).toContain(`Integrity   ${INTEGRITY}\n`);
    expect(out).toContain(`  source    ${SERVER_REPO.repository}\n`);
    expect(out).toContain(`  workflow  ${SERVER_REPO.workflow}\n`);
    expect(out).toContain(`  ref       refs/tags/v1.0.0\n`);
    expect(out).toContain(`  commit    ${SERVER_REPO.commit}\n`);
    expect(out).toContain('Dependencies  1 of 1 packages with verified provenance\n');
    expect(out).toMatch(/Added server 'demo-server' .* pinned to https:\/\/github\.com\/mcp-warden-test\/demo-server \.github\/workflows\/release\.yml/);
  });

  it('writes the server entry with its package, provenance "required" and the publisher pinned', () => {
    const s = serverEntry(home, 'demo-server');
    expect(s.command).toBe(NODE);
    expect(s.args).toEqual([path.join(pkgDir(), 'server.mjs')]);
    expect(s.package).toEqual({ name: DEMO_SERVER, version: '1.0.0', integrity: INTEGRITY, store: ENTRY });
    expect(s.provenance).toBe('required');
    expect(s.identity).toEqual({ issuer: GITHUB_ISSUER, repository: SERVER_REPO.repository, workflow: SERVER_REPO.workflow });
  });

  it('allowlists the package tree with the provenance it was admitted on', () => {
    const entries = readJson<AllowlistJson>(path.join(home, 'allowlist.json')).entries;
    const tree = entries.find((e) => e.kind === 'package' && e.path === pkgDir());
    expect(tree?.provenance).toMatchObject({
      package: `${DEMO_SERVER}@1.0.0`,
      integrity: INTEGRITY,
      publisher: { issuer: GITHUB_ISSUER, repository: SERVER_REPO.repository, workflow: SERVER_REPO.workflow, ref: 'refs/tags/v1.0.0', commit: SERVER_REPO.commit },
    });
    expect(entries.find((e) => e.kind === 'script')?.path).toBe(path.join(pkgDir(), 'server.mjs'));
  });

  it('seals the store entry: no write bit anywhere, the lockfile npm wrote and install.json kept', () => {
    expect(fs.readdirSync(path.join(home, 'store')).filter((n) => !n.startsWith('.lock'))).toEqual([ENTRY]);
    const writable = Object.entries(treeSnapshot(store())).filter(([, v]) => !v.startsWith('link') && parseInt(v.split(' ')[1] as string, 8) & 0o222);
    expect(writable).toEqual([]);
    const lock = readJson<PackageLockJson>(path.join(store(), 'package-lock.json')).packages;
    expect(lock[`node_modules/${DEMO_SERVER}`]).toMatchObject({ version: '1.0.0', integrity: INTEGRITY });
    expect(lock[`node_modules/${DEMO_DEP}`]).toMatchObject({ version: '1.0.0', integrity: expect.stringMatching(/^sha512-/) });
    const record = readJson<InstallJson>(path.join(store(), 'install.json'));
    expect(record.package).toEqual({ name: DEMO_SERVER, version: '1.0.0', integrity: INTEGRITY });
    expect(record.provenance.identity).toMatchObject({ repository: SERVER_REPO.repository, workflow: SERVER_REPO.workflow, commit: SERVER_REPO.commit });
    expect(record.registry).toBe(`${reg.url}/`);
    expect(record.tree.root).toBe(pkgDir());
    expect(record.dependencies).toEqual([
      { name: DEMO_DEP, version: '1.0.0', integrity: member(lock, `node_modules/${DEMO_DEP}`).integrity, provenance: expect.objectContaining({ repository: identityFor(DEMO_DEP, '1.0.0').repository }) },
    ]);
  });

  it('records package_installed in the audit log, with the publisher and the dependency count', () => {
    const events = auditEvents(home);
    expect(events.find((e) => e.event === 'package_installed')).toMatchObject({
      server: 'demo-server',
      package: DEMO_SERVER,
      version: '1.0.0',
      integrity: INTEGRITY,
      store: ENTRY,
      provenance: { issuer: GITHUB_ISSUER, repository: SERVER_REPO.repository, workflow: SERVER_REPO.workflow, ref: 'refs/tags/v1.0.0', commit: SERVER_REPO.commit },
      dependencies: 1,
      dependenciesWithProvenance: 1,
    });
    expect(events.some((e) => e.event === 'unsigned_admitted')).toBe(false);
  });

  it('--dry-run verifies and shows everything, and leaves the home byte-identical', () => {
    const before = treeSnapshot(home);
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--id', 'demo-dry', '--dry-run'], { env: reg.env });
    expect(r.code, r.stderr).toBe(0);
    for (const line of [`Package     ${DEMO_SERVER}@1.0.0`, `Integrity   ${INTEGRITY}`, `  source    ${SERVER_REPO.repository}`, `  workflow  ${SERVER_REPO.workflow}`, '  ref       refs/tags/v1.0.0', `  commit    ${SERVER_REPO.commit}`]) {
      expect(r.stdout).toContain(`${line}\n`);
    }
    expect(r.stdout).toContain('Dependencies  1 of 1 packages with verified provenance\n');
    expect(r.stdout).toContain("Runs        node server.mjs (server 'demo-dry')\n");
    expect(r.stdout).toContain('Dry run: nothing was written.\n');
    expect(treeSnapshot(home)).toEqual(before);
  });

  it('locks its surface, and mcp-warden run serves its tools to an MCP client, its dependency loaded', async () => {
    expect(installed.stdout).toMatch(/Locked 2 tools \(surface sha256:[0-9a-f]{64}\)/);
    const { client } = await connectClient(home, 'demo-server');
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['add', 'echo']);
      const echoed = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
      expect(echoed.content).toEqual([{ type: 'text', text: 'Echo: hello' }]); // written by demo-dep
    } finally {
      await client.close();
    }
  });

  it('a second install of the same version under another --id reuses the sealed store entry unchanged', () => {
    const before = treeSnapshot(store());
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--id', 'demo-again', '--identity', `${SERVER_REPO.repository}/*`, '--yes'], { env: reg.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Store       ${store()} (already installed, unchanged)\n`);
    expect(treeSnapshot(store())).toEqual(before);
    expect(fs.readdirSync(path.join(home, 'store')).filter((n) => !n.startsWith('.lock'))).toEqual([ENTRY]);
    expect(serverEntry(home, 'demo-again').package).toEqual(serverEntry(home, 'demo-server').package);
  });
});

describe('install: a server that needs a key', () => {
  let home: string;
  beforeAll(() => {
    home = path.join(dir, 'home-key');
    reg.trustHome(home);
  });

  it('--env NAME=VALUE and --pass-env NAME give the server its environment in servers.json, never in tools.lock', () => {
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--id', 'demo-key', '--env', 'DEMO_API_KEY=k3y-in-servers-json', '--pass-env', 'DEMO_PASSED', '--yes'], { env: reg.env });
    expect(r.code, r.stderr).toBe(0);
    expect(serverEntry(home, 'demo-key')).toMatchObject({ env: { DEMO_API_KEY: 'k3y-in-servers-json' }, passEnv: ['DEMO_PASSED'] });
    expect(fs.readFileSync(path.join(home, 'tools.lock'), 'utf8')).not.toContain('k3y-in-servers-json');
    expect(fs.readFileSync(path.join(home, 'audit.log'), 'utf8')).not.toContain('k3y-in-servers-json');
  });

  it('an argument that looks like a credential is refused before anything is fetched, and never printed', () => {
    const before = fs.readFileSync(path.join(home, 'servers.json'), 'utf8');
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--id', 'demo-arg', '--yes', '--', '--api-key=k3y-as-argument'], { env: reg.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mcp-warden: SECRET_IN_ARGUMENTS: server 'demo-arg': argument 1 \(--api-key=…\) looks like a credential/m);
    expect(r.stderr).toContain('--env NAME');
    expect(r.stdout + r.stderr).not.toContain('k3y-as-argument');
    expect(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).toBe(before);
  });
});

describe('install: a package the registry serves without attestations', () => {
  it('--attestations FILE verifies it against the attestations given and installs it, provenance required', () => {
    const genuine = reg.publish(DEMO_SERVER, '1.1.0'); // its release's attestations, kept aside
    reg.publish(DEMO_SERVER, '1.1.0', { attestations: 'none' }); // the same tarball, served without them
    const home = path.join(dir, 'home-attestations-file');
    reg.trustHome(home);
    const r = cli(home, ['install', `${DEMO_SERVER}@1.1.0`, '--attestations', genuine.attestationsFile as string, '--yes'], { env: reg.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('(attestations read from --attestations)\n');
    expect(r.stdout).toContain('  ref       refs/tags/v1.1.0\n');
    expect(r.stdout).toMatch(/Locked 3 tools/);
    expect(serverEntry(home, 'demo-server')).toMatchObject({ provenance: 'required', identity: { repository: SERVER_REPO.repository } });
    expect(reg.requests()).not.toContain(`GET /-/npm/v1/attestations/${DEMO_SERVER}@1.1.0 200`);
  });

  it('--allow-unsigned admits it: policy "preferred", no identity pinned, unsigned_admitted audited', () => {
    reg.publish(DEMO_SERVER, '1.1.0', { attestations: 'none' }); // nothing signed: released without provenance
    const home = path.join(dir, 'home-unsigned');
    reg.trustHome(home);
    const r = cli(home, ['install', `${DEMO_SERVER}@1.1.0`, '--allow-unsigned', '--yes'], { env: reg.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Provenance  none');
    expect(r.stdout).toContain('Admitted unsigned (--allow-unsigned)');
    const s = serverEntry(home, 'demo-server');
    expect(s.provenance).toBe('preferred');
    expect(s.identity).toBeUndefined();
    const events = auditEvents(home);
    expect(events.find((e) => e.event === 'unsigned_admitted')).toMatchObject({ server: 'demo-server', package: DEMO_SERVER, version: '1.1.0', how: '--allow-unsigned' });
    expect(events.find((e) => e.event === 'package_installed')).toMatchObject({ version: '1.1.0', provenance: 'unsigned' });
    expect(readJson<InstallJson>(path.join(home, 'store', String(s.package?.store), 'install.json')).provenance).toEqual({ unsigned: true, admittedBy: '--allow-unsigned' });
  });
});
