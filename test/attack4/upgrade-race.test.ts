import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SERVER, fixtureDir, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { pack } from '../helpers/npm-pack.mjs';
import { cli, tempDir, WARDEN } from '../helpers/warden.js';

// `upgrade` switches servers.json "in one step", refusing "when the server's entry is no longer the one the upgrade
// started from (another upgrade, an edit)" (upgrade-switch.ts). The upgrade runs for a while between reading the
// entry and switching it (it installs, launches the new version in a staging home, and on a terminal waits for a
// yes); an operator who tightens the server meanwhile must not have the change silently undone. What each package
// stands for:
//   - demo-server 1.0.0: the genuine release, installed first; 1.1.0: the genuine next release by the same publisher
//     (signed by the test sigstore instance the home trusts), whose server waits at start, until the test opens a
//     gate, the first time it is launched: that is where the operator's edit lands.

const T = 180_000;

let dir: string;
let reg: ProvenanceRegistry;
let home: string;
const serversFile = (): string => path.join(home, 'servers.json');
const readServers = (): { servers: Record<string, Record<string, unknown>> } => JSON.parse(fs.readFileSync(serversFile(), 'utf8'));

beforeAll(async () => {
  dir = tempDir('warden-attack4-upgrade-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
  const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--yes'], { env: reg.env });
  if (r.code !== 0) throw new Error(`the first install failed (${r.code}): ${r.stderr}`);
});
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [WARDEN, '--home', home, ...args], { env: reg.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('upgrade does not undo an edit of the server made while it ran', () => {
  it('posture set to enforce during the upgrade stays enforce (or the upgrade is refused)', async () => {
    // The server starts in monitor posture (the operator's choice at first).
    const s = readServers();
    (s.servers['demo-server'] as Record<string, unknown>).posture = 'monitor';
    fs.writeFileSync(serversFile(), JSON.stringify(s, null, 2) + '\n');

    const gate = path.join(dir, 'gate');
    const original = fs.readFileSync(path.join(fixtureDir(DEMO_SERVER, '1.1.0'), 'server.mjs'), 'utf8');
    const wait = `\nimport __fs from 'node:fs';\nif (!__fs.existsSync(${JSON.stringify(gate + '.open')})) {\n  __fs.writeFileSync(${JSON.stringify(gate + '.waiting')}, '');\n  const t = Date.now();\n  while (!__fs.existsSync(${JSON.stringify(gate + '.open')}) && Date.now() - t < 20000) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);\n}\n`;
    const gated = original.replace("import { serve, textResult } from './lib/rpc.mjs';\n", `import { serve, textResult } from './lib/rpc.mjs';${wait}`);
    expect(gated).not.toBe(original);
    reg.publish(DEMO_SERVER, '1.1.0', { tarball: pack(fixtureDir(DEMO_SERVER, '1.1.0'), { replace: { 'server.mjs': gated } }) });

    const upgrading = run(['upgrade', 'demo-server', '--yes']);
    await until(() => fs.existsSync(`${gate}.waiting`), 90_000);
    // Meanwhile the operator tightens the server: enforce, not monitor.
    const edited = readServers();
    (edited.servers['demo-server'] as Record<string, unknown>).posture = 'enforce';
    fs.writeFileSync(serversFile(), JSON.stringify(edited, null, 2) + '\n');
    fs.writeFileSync(`${gate}.open`, '');
    const r = await upgrading;

    const after = readServers().servers['demo-server'] as { posture?: string; package: { version: string } };
    if (r.code === 0) {
      expect(after.package.version).toBe('1.1.0');
      expect(after.posture, `the operator's edit was undone by the switch:\n${r.stdout}`).toBe('enforce');
    } else {
      expect(r.stderr).toMatch(/changed while the upgrade was being prepared/);
      expect(after.posture).toBe('enforce');
    }
  }, T);

  it('run again with nothing edited, the upgrade switches, keeping the edit', async () => {
    const r = await run(['upgrade', 'demo-server', '--yes']);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    const after = readServers().servers['demo-server'] as { posture?: string; package: { version: string } };
    expect([after.package.version, after.posture]).toEqual(['1.1.0', 'enforce']);
  }, T);
});
