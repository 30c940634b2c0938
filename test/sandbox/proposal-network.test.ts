import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enrollProbe, probeDir, requireBwrap } from '../helpers/probe-home.js';
import { cli, connectClient } from '../helpers/warden.js';

// The network half of a sandbox proposal (src/sandbox/propose-network.ts, docs/adr/0063-observed-enrollment.md
// addendum): `sandbox <id> --propose` offers the names a confined server asked its proxy for and was refused, from
// the audit log's sandbox_denied events, as the server's own behaviour to review; `--yes` never grants them. The
// probe's home comes from the run template of test/sandbox/confinement.test.ts (one `add` a run).

beforeAll(requireBwrap);

let dir: string;
let home: string;
let env: Record<string, string>;

beforeEach(() => {
  const p = probeDir('warden-propnet-');
  ({ dir, home, env } = p);
  enrollProbe(p);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const warden = (...args: string[]) => cli(home, args, { env });

describe('the proposal offers the network a confined server asked for', () => {
  it('lists each name and port its proxy refused (how often), an address as not grantable, and prints the grant; --propose --yes grants none of them', async () => {
    expect(warden('sandbox', 'probe', '--allow-domain', 'example.com').code).toBe(0);
    const { client } = await connectClient(home, 'probe', env);
    try {
      for (const [host, port] of [['api.example.org', 8443], ['evil.example.net', 443], ['api.example.org', 8443], ['10.0.0.1', 443], ['localhost', 9]] as const) {
        const r = (await client.callTool({ name: 'proxy', arguments: { host, port } })) as { content: { text: string }[] };
        expect(r.content[0]?.text).toBe('refused: HTTP/1.1 403 Forbidden');
      }
    } finally {
      await client.close();
    }
    const shown = warden('sandbox', 'probe', '--propose', '--json');
    expect(shown.code, shown.stderr).toBe(0);
    const { network } = JSON.parse(shown.stdout);
    expect(network.refused).toEqual([
      { grant: 'api.example.org:8443', times: 2, last: expect.any(String) },
      { grant: 'evil.example.net', times: 1, last: expect.any(String) },
      { grant: 'localhost:9', times: 1, last: expect.any(String) },
    ]);
    expect(network.notGrantable).toEqual([{ host: '10.0.0.1', port: 443, why: expect.stringMatching(/address/) }]);
    const text = warden('sandbox', 'probe', '--propose');
    expect(text.stdout).toContain("network its confined sessions asked for and the proxy refused (the server's own behaviour: review each name; --propose --yes grants none)");
    expect(text.stdout).toMatch(/api\.example\.org:8443: 2 times, last at /);
    expect(text.stdout).toContain(' sandbox probe --allow-domain api.example.org:8443 --allow-domain evil.example.net --allow-domain localhost:9');
    const applied = warden('sandbox', 'probe', '--propose', '--yes', '--json');
    expect(applied.code, applied.stderr).toBe(0);
    const servers = JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8'));
    expect(JSON.stringify(servers.servers.probe.sandbox)).not.toMatch(/evil|api\.example\.org|localhost:9/);
  });

  it('a grant made since is no longer offered', async () => {
    expect(warden('sandbox', 'probe', '--allow-domain', 'example.com').code).toBe(0);
    const { client } = await connectClient(home, 'probe', env);
    try {
      await client.callTool({ name: 'proxy', arguments: { host: 'api.example.org', port: 443 } });
    } finally {
      await client.close();
    }
    expect(warden('sandbox', 'probe', '--allow-domain', 'api.example.org').code).toBe(0);
    const { network } = JSON.parse(warden('sandbox', 'probe', '--propose', '--json').stdout);
    expect(network.refused).toEqual([]);
  });
});
