import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tarball } from '../helpers/npm-pack.mjs';
import { startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { cli, tempDir } from '../helpers/warden.js';

// `install --identity PATTERN`: "the signer is not the one --identity PATTERN asks for (IDENTITY_MISMATCH; the
// pattern matches the whole certificate identity ... e.g. --identity 'https://github.com/acme/*/.github/workflows/
// release.yml@refs/tags/*')" (docs/guide.md §8). The certificate's identity (its SAN) is the workflow the job ran,
// which for a reusable workflow is the *called* one, in the repository that hosts it, whoever calls it; the
// repository that was built is in another field (Source Repository URI, and the Build Config URI names the
// caller). What each package stands for, all genuinely signed by the test sigstore instance the home trusts:
//   - tickets-mallory: built in github.com/mallory/tickets by a workflow calling acme's public reusable release
//     workflow (github.com/acme/shared-workflows/.github/workflows/release.yml@refs/tags/v1), published by mallory.
//   - tickets-acme: built in github.com/acme/tickets by its release.yml calling that same reusable workflow.

const CODE = /^mcp-warden: ([A-Z_]+):/m;
const PATTERN = 'https://github.com/acme/*/.github/workflows/release.yml@refs/tags/*';
const SHARED = 'https://github.com/acme/shared-workflows/.github/workflows/release.yml@refs/tags/v1';

let dir: string;
let reg: ProvenanceRegistry;
let home: string;

function publish(name: string, repository: string): void {
  const tgz = tarball([
    { rel: 'package.json', data: JSON.stringify({ name, version: '1.0.0', type: 'module', bin: 'server.mjs' }) },
    { rel: 'server.mjs', data: '// a server\n' },
  ]);
  reg.publish(name, '1.0.0', { tarball: tgz, identity: { repository, workflow: '.github/workflows/release.yml', ref: 'refs/tags/v1.0.0', commit: crypto.createHash('sha1').update(name).digest('hex'), signer: SHARED } });
}

beforeAll(async () => {
  dir = tempDir('warden-attack4-identity-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
  publish('tickets-mallory', 'https://github.com/mallory/tickets');
  publish('tickets-acme', 'https://github.com/acme/tickets');
});
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe('--identity and reusable workflows', () => {
  it('a package built in another owner\'s repository through acme\'s reusable workflow does not match an acme pattern', () => {
    const r = cli(home, ['install', 'tickets-mallory@1.0.0', '--identity', PATTERN, '--dry-run'], { env: reg.env });
    expect(r.stdout + r.stderr).toContain('https://github.com/mallory/tickets'); // the source, as the warden reads it
    expect([r.code, CODE.exec(r.stderr)?.[1]], `${r.stdout}\n${r.stderr}`).toEqual([3, 'IDENTITY_MISMATCH']);
  });

  it('acme\'s own repository through the same reusable workflow still matches', () => {
    const r = cli(home, ['install', 'tickets-acme@1.0.0', '--identity', PATTERN, '--dry-run'], { env: reg.env });
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  });
});
