import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack } from '../helpers/npm-pack.mjs';
import { DEMO_SERVER, fixtureDir, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { SERVERS, auditEvents, cli, connectClient } from '../helpers/warden.js';
import { writeTracingOff } from '../helpers/write-tracing.js';

// A server installed into the sealed store (as root, where the store's read-only bits do not hold: issue 29,
// point 5) tries to change its own store entry, and to read another installed server's. Confined, both fail in
// the kernel; the store entry and the attestation are unchanged. The package is the demo server's release with
// its server.mjs replaced by the hostile test/servers/sandbox-probe.mjs: a publisher's next build turned hostile.
// The home sets servers.json's "writeTracing": "off": the claim is what the kernel answers the server, never the
// report of denied writes (test/sandbox/write-denials*.test.ts), and bpftrace at each confined launch as root
// costs ~0.5 s.

const T = 120_000;
let dir: string;
let home: string;
let reg: ProvenanceRegistry;
const probeTarball = (version: string): Buffer => {
  const from = fixtureDir(DEMO_SERVER, '1.0.0');
  const manifest = { ...(JSON.parse(fs.readFileSync(path.join(from, 'package.json'), 'utf8')) as Record<string, unknown>), version };
  return pack(from, { replace: { 'package.json': JSON.stringify(manifest, null, 2) + '\n', 'server.mjs': fs.readFileSync(path.join(SERVERS, 'sandbox-probe.mjs')), 'lib/rpc.mjs': fs.readFileSync(path.join(SERVERS, 'lib/rpc.mjs')) } });
};

beforeAll(async () => {
  if (!['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'].some((f) => fs.existsSync(f))) throw new Error('bubblewrap (bwrap) is missing on this host: apt-get install bubblewrap (README, "Test")');
  dir = fs.mkdtempSync('/var/tmp/warden-sandbox-store-');
  home = path.join(dir, 'home');
  reg = await startProvenanceRegistry(dir);
  reg.trustHome(home);
  reg.publish(DEMO_SERVER, '1.0.5', { tarball: probeTarball('1.0.5') });
  for (const [spec, id] of [[`${DEMO_SERVER}@1.0.5`, 'probe'], [`${DEMO_SERVER}@1.0.0`, 'other']]) {
    const r = cli(home, ['install', spec as string, '--id', id as string, '--yes'], { env: reg.env });
    if (r.code !== 0) throw new Error(`install ${spec} failed (${r.code}): ${r.stderr}`);
  }
  const set = cli(home, ['sandbox', 'probe', '--network', 'none']);
  if (set.code !== 0) throw new Error(`sandbox failed: ${set.stderr}`);
  writeTracingOff(home);
}, T);
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

const storeEntry = (id: string): string => {
  const config = JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')) as { servers: Record<string, { package: { store: string } }> };
  return path.join(home, 'store', config.servers[id]?.package.store as string);
};

describe('a confined server installed in the store', () => {
  it('cannot write into its own store entry, nor read another server\'s; the entry and the attestation are unchanged', async () => {
    const own = storeEntry('probe');
    const script = path.join(own, 'node_modules', DEMO_SERVER, 'server.mjs');
    expect(fs.existsSync(script)).toBe(true);
    const before = fs.readFileSync(script);
    const { client } = await connectClient(home, 'probe');
    const call = async (name: string, args: Record<string, unknown>): Promise<string> => ((await client.callTool({ name, arguments: args })) as { content: { text: string }[] }).content[0]?.text ?? '';
    try {
      // Opening its 0444 file for writing meets the store's read-only bits first, which now hold for root too
      // (no CAP_DAC_OVERRIDE inside); creating a file in its directory meets the read-only mount first.
      expect(await call('write', { path: script })).toBe('denied: EACCES');
      expect(await call('write', { path: path.join(path.dirname(script), 'memory.jsonl') })).toBe('denied: EROFS');
      expect(await call('read', { path: path.join(storeEntry('other'), 'node_modules', DEMO_SERVER, 'server.mjs') })).toBe('denied: ENOENT');
    } finally {
      await client.close();
    }
    expect(fs.readFileSync(script).equals(before)).toBe(true);
    expect(fs.existsSync(path.join(path.dirname(script), 'memory.jsonl'))).toBe(false);
    const verify = cli(home, ['verify', 'probe']);
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);
    expect(auditEvents(home).filter((e) => e.event === 'launch' && e.server === 'probe').at(-1)).toMatchObject({ decision: 'allow', sandbox: { state: 'confined' } });
  }, T);
});
