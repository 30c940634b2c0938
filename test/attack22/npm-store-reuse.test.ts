import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_DEP, DEMO_SERVER, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { cli, tempDir } from '../helpers/warden.js';
import { storeNames } from './npm-common.js';

// Issue 26, items 17-20, another state of the store: an entry of the same bytes made earlier (by a warden before
// docs/adr/0043, whose lockfile check let a git source through) is reused by the next install of that version
// without npm running. Reuse must hold the entry's lockfile to the same rules as a new install.

const CODE = /^mcp-warden: ([A-Z_]+):/m;

let dir: string;
let reg: ProvenanceRegistry;
let home: string;
beforeAll(async () => {
  dir = tempDir('warden-npm-store-reuse-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
  const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--id', 'first', '--yes'], { env: reg.env });
  if (r.code !== 0) throw new Error(`the first install failed (${r.code}): ${r.stderr}`);
}, 180_000);
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe('an earlier store entry is reused only if its lockfile passes the rules a new install must pass', () => {
  it('an entry whose lockfile took a dependency from a git URL is refused for the next install of that version', () => {
    const [entry] = storeNames(home);
    const lockFile = path.join(home, 'store', entry as string, 'package-lock.json');
    const lock = JSON.parse(fs.readFileSync(lockFile, 'utf8')) as { packages: Record<string, Record<string, unknown>> };
    (lock.packages[`node_modules/${DEMO_DEP}`] as Record<string, unknown>).resolved = 'git+file:///tmp/demo-dep#' + 'a'.repeat(40);
    fs.chmodSync(lockFile, 0o600);
    fs.writeFileSync(lockFile, JSON.stringify(lock, null, 2));
    fs.chmodSync(lockFile, 0o444); // sealed again, as the earlier warden left it
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--id', 'second', '--yes'], { env: reg.env });
    expect([r.code, CODE.exec(r.stderr)?.[1]], `${r.stdout}\n${r.stderr}`).toEqual([3, 'NPM_SOURCE_REFUSED']);
    expect(r.stderr).toContain(entry);
    const servers = (JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')) as { servers: Record<string, unknown> }).servers;
    expect(Object.keys(servers)).toEqual(['first']);
  }, 120_000);
});
