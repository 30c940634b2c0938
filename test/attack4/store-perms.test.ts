import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SERVER, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { cli, tempDir } from '../helpers/warden.js';
import { variant } from './common.js';

// The warden refuses state another user could write (src/store/home.ts checkStateFiles: cache/, audit.log,
// imports.json, backups/, packages/ ...), sshd StrictModes style; `store gc` refuses a store/ another user could
// write. The sealed store holds the code installed servers run: a store/ directory writable by group or others (a
// careless chmod, a shared home) lets another local user rename an entry away and put a directory of theirs in
// its place between the warden's digest check and node's reads, or plant entries. What each package stands for:
//   - demo-server 1.0.0 and 1.0.9: genuine releases, signed by the test sigstore instance the home trusts.

const T = 120_000;
let dir: string;
let reg: ProvenanceRegistry;
let home: string;
beforeAll(async () => {
  dir = tempDir('warden-attack4-perms-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
  const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--yes'], { env: reg.env });
  if (r.code !== 0) throw new Error(`install failed (${r.code}): ${r.stderr}`);
  reg.publish(DEMO_SERVER, '1.0.9', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.9' }) });
  fs.chmodSync(path.join(home, 'store'), 0o777); // the careless chmod
}, T);
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe('a store/ directory others can write', () => {
  it('is refused by store gc (holds today)', () => {
    const r = cli(home, ['store', 'gc', '--dry-run']);
    expect(r.stderr).toMatch(/FILE_INSECURE/);
  });

  it('is refused by install before anything is put into it', () => {
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.9`, '--id', 'second', '--yes'], { env: reg.env });
    expect(r.stderr, r.stdout).toMatch(/^mcp-warden: FILE_INSECURE:.*store/m);
    expect(fs.readdirSync(path.join(home, 'store')).filter((n) => n.includes('1.0.9'))).toEqual([]);
  }, T);

  it('is refused by run, which would start the server from it', () => {
    const r = cli(home, ['run', 'demo-server'], { env: reg.env });
    expect(r.stderr).toMatch(/FILE_INSECURE.*store/);
  }, T);
});
