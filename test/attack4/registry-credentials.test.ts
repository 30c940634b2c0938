import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SERVER, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { cli, tempDir } from '../helpers/warden.js';

// Authenticated registries are not supported (docs/guide.md §8), but a registry URL with credentials in it
// (registry=https://user:token@host/, a common way to configure a private mirror) is what `npm config get registry`
// answers. The warden must not copy that token into its messages (terminals, CI logs) or into the store. Holds:
// npm refuses to print a registry value carrying credentials ("protected"), so install stops at REGISTRY_FAILED.
//   - demo-server 1.0.0: the genuine release, on the registry stand-in, reached through a URL carrying a token.

const TOKEN = 'npm_s3cretTOKENdoNotPrint';
const T = 120_000;
let dir: string;
let reg: ProvenanceRegistry;
let home: string;
beforeAll(async () => {
  dir = tempDir('warden-attack4-creds-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
});
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe('a registry URL carrying credentials', () => {
  it('is never printed with them', () => {
    const url = new URL(reg.env.npm_config_registry as string);
    url.username = 'ci';
    url.password = TOKEN;
    const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--dry-run'], { env: { ...reg.env, npm_config_registry: url.toString() } });
    expect(r.stdout + r.stderr, `${r.stdout}\n${r.stderr}`).not.toContain(TOKEN);
    expect(r.stderr).toMatch(/^mcp-warden: REGISTRY_FAILED:/m);
  }, T);
});
