import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SERVER, startProvenanceRegistry, trustRootOf, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { createTestPki } from '../helpers/sigstore-pki.js';
import { cli, tempDir } from '../helpers/warden.js';

// `trust-root update --from FILE`: on an air-gapped machine the operator imports a file brought from elsewhere.
// Importing a root that trusts an attacker's CA is the operator's decision, but only if the warden shows it: the
// summary of what changed must not say "the same authorities" when the keys behind them were replaced, and text
// from the file must not be able to rewrite the terminal. What each root stands for:
//   - the home's root: the registry stand-in's test sigstore instance (the genuine one here).
//   - "rogue": a second test instance, with the same URLs and validity windows (createTestPki uses fixed ones),
//     i.e. an attacker's CA and logs dressed under the names of the genuine ones.

let dir: string;
let reg: ProvenanceRegistry;
beforeAll(async () => {
  dir = tempDir('warden-attack4-root-');
  reg = await startProvenanceRegistry(dir);
});
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe('trust-root update --from shows a replaced key, whatever it is called', () => {
  it('a trusted_root.json whose CA and log keys are another instance\'s, under the same names and windows, is not "the same authorities"', () => {
    const home = path.join(dir, 'home-swap');
    reg.trustHome(home);
    const rogue = createTestPki();
    const file = path.join(dir, 'rogue-trusted_root.json');
    fs.writeFileSync(file, JSON.stringify(rogue.trustedRoot));
    const r = cli(home, ['trust-root', 'update', '--from', file], { env: reg.env });
    expect(r.code, r.stderr).toBe(0); // the operator's decision: written
    expect(r.stdout).not.toContain('(the same authorities as before)');
    expect(r.stdout).toMatch(/^ {2}\+ certificate authority /m);
    expect(r.stdout).toMatch(/^ {2}- certificate authority /m);
    expect(r.stdout).toMatch(/^ {2}\+ transparency log /m);
    // From now on the rogue instance's signatures verify: what the operator must have been shown.
    const home2 = path.join(dir, 'home-swap-2');
    reg.publish(DEMO_SERVER, '1.0.0', { pki: rogue });
    fs.mkdirSync(home2, { mode: 0o700 });
    fs.copyFileSync(path.join(home, 'trust-root.json'), path.join(home2, 'trust-root.json'));
    const npmKeysKept = cli(home2, ['install', `${DEMO_SERVER}@1.0.0`, '--dry-run'], { env: reg.env });
    // the npm keys were kept (a trusted_root.json replaces only its half): the rogue publish attestation fails
    expect(npmKeysKept.stderr).toMatch(/npm publish attestation/);
  });

  it('the names, source and dates of a root file are printed with control characters escaped', () => {
    const home = path.join(dir, 'home-escape');
    reg.trustHome(home);
    const root = trustRootOf(reg.pki, new Date());
    const ESC = '\u001b';
    const hide = `${ESC}[1A${ESC}[2K`; // cursor up, erase line: hides the line above
    const forged = {
      ...root,
      source: `sigstore TUF${hide}`,
      trustedRoot: {
        ...root.trustedRoot,
        certificateAuthorities: [...root.trustedRoot.certificateAuthorities, { ...createTestPki().trustedRoot.certificateAuthorities[0], uri: `https://fulcio.sigstore.dev${hide}` }],
      },
    };
    const file = path.join(dir, 'escape-trust-root.json');
    fs.writeFileSync(file, JSON.stringify(forged));
    const r = cli(home, ['trust-root', 'update', '--from', file], { env: reg.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ {2}\+ certificate authority /m);
    expect(r.stdout, 'raw escape sequences from the file reached the terminal').not.toContain(ESC);
    const show = cli(home, ['trust-root', 'show'], { env: reg.env });
    expect(show.stdout, 'raw escape sequences from the file reached the terminal').not.toContain(ESC);
  });
});
