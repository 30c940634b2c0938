import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SERVER, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { cli, tempDir } from '../helpers/warden.js';
import { variant } from './common.js';

// Text a registry or a publisher wrote, shown on the operator's terminal by install: "Untrusted names are printed
// escaped and bounded" (docs/threat-model.md) holds for tool names; here for what install prints. A terminal acts
// on ESC sequences (erase a line, move up) and bidi controls reorder what is read. What each package stands for:
//   - demo-server 1.0.11: a genuine release whose packument's dist.integrity the registry filled with escapes.
//   - demo-server 1.0.12: a publisher's signed tarball whose package.json name is not the package's, with escapes.
//   - demo-server 1.0.13: a genuine release signed for a tag whose name carries a right-to-left override (git allows
//     it in ref names; Fulcio copies the ref into the certificate).

const ESC = '\u001b';
const T = 120_000;
let dir: string;
let reg: ProvenanceRegistry;
let home: string;
beforeAll(async () => {
  dir = tempDir('warden-attack4-display-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
});
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe('install prints registry and publisher text escaped', () => {
  it('a dist.integrity carrying terminal escapes (INTEGRITY_MISMATCH)', () => {
    reg.publish(DEMO_SERVER, '1.0.11', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.11' }), integrity: `x${ESC}[2K${ESC}[1A${ESC}[2Kok` });
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.11`, '--dry-run'], { env: reg.env });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/INTEGRITY_MISMATCH/);
    expect(r.stderr).not.toContain(ESC);
  }, T);

  it('a tarball package.json naming another package with terminal escapes', () => {
    reg.publish(DEMO_SERVER, '1.0.12', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.12', name: `other${ESC}[2K` }) });
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.12`, '--dry-run'], { env: reg.env });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/says it is/);
    expect(r.stderr).not.toContain(ESC);
  }, T);

  it('a signer identity whose ref carries a bidi override', () => {
    const ref = 'refs/tags/v1.0.13\u202e';
    reg.publish(DEMO_SERVER, '1.0.13', {
      tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.13' }),
      identity: { repository: 'https://github.com/mcp-warden-test/demo-server', workflow: '.github/workflows/release.yml', ref, commit: crypto.createHash('sha1').update('x').digest('hex') },
    });
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.13`, '--dry-run'], { env: reg.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('  ref       refs/tags/v1.0.13');
    expect(r.stdout).not.toContain('\u202e');
  }, T);
});
