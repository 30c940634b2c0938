import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addedHome } from '../helpers/run-template.js';
import { NODE, SERVERS, cli, connectClient, tempDir } from '../helpers/warden.js';
import { writeTracingOff } from '../helpers/write-tracing.js';

// A root warden's confined server runs as uid 0 without capabilities over a read-only view of the system: it reads
// /etc/shadow (root owns it) unless read.deny hides it. Hiding a name rebuilds its directory (sandbox/deny-plan.ts),
// and /etc holds well over a hundred entries (137 on this machine kind): within the bound, so it is hidden.
// The home sets servers.json's "writeTracing": "off": the claim is what a read sees, never the report of denied
// writes (test/sandbox/write-denials*.test.ts), and bpftrace at each confined launch as root costs ~0.5 s.

const root = process.getuid?.() === 0;
let dir: string;
let client: Client | undefined;

const call = async (name: string, args: Record<string, unknown>): Promise<string> =>
  ((await (client as Client).callTool({ name, arguments: args })) as { content: { text: string }[] }).content[0]?.text ?? '';

beforeAll(async () => {
  dir = tempDir();
  if (!root) return;
  const home = path.join(dir, 'home');
  addedHome(home, 'probe', [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]); // one add a run, copied
  const set = cli(home, ['sandbox', 'probe', '--network', 'none', '--deny-read', '/etc/shadow']);
  expect(set.code, set.stderr).toBe(0);
  writeTracingOff(home);
  ({ client } = await connectClient(home, 'probe'));
});
afterAll(async () => {
  await client?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.runIf(root)('read.deny of a file in /etc, for a root warden', () => {
  it('hides /etc/shadow from the confined server while the rest of /etc still reads', async () => {
    expect(fs.readdirSync('/etc').length, 'the premise: /etc is over the old bound of 128 entries').toBeGreaterThan(128);
    expect(await call('read', { path: '/etc/shadow' })).toBe('denied: EACCES');
    expect(await call('read', { path: '/etc/passwd' })).toMatch(/^ok: [1-9]\d* bytes$/);
  });
});
