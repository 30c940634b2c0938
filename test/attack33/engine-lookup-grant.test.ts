import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addServerWarm } from '../helpers/warm-digest.js';
import { NODE, SERVERS, auditEvents, cli, connectClient, tempDir } from '../helpers/warden.js';

// ATTACK (sandbox, write grants; ADR 0050): "no write grant may reach what the warden itself runs (its install,
// the node running it, bubblewrap)" is judged against the bwrap file found now (src/sandbox/launch.ts
// wardenFiles: `s.engine.file`), not against where the warden looks for it. bwrap and nsenter are looked up on
// servers.json's trusted path, first directory first, and admitted when owned by root or the warden's uid and
// not writable by others (src/sandbox/engine.ts findTrusted); what a confined server writes is owned by the
// warden's uid (uid 0 for a root warden). A server granted a directory of the trusted path that stands before
// the real bwrap (/usr/local/bin on the default path; here a directory of the test put first) writes an
// executable `bwrap` there: the next sandboxed launch of any server runs it, as the warden, outside every
// namespace, and the sandbox of that server is whatever it chooses. Asserts the secure behaviour: a write grant
// holding a directory of the trusted path refuses the launch (as one over the real engine does), and nothing the
// server writes is ever run as the engine.

let dir: string;
let home: string;
let bin: string;
let marker: string;
const bwrap = fs.realpathSync(['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'].find((f) => fs.existsSync(f)) ?? '/usr/bin/bwrap');

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  bin = path.join(dir, 'bin');
  marker = path.join(dir, 'engine-ran');
  fs.mkdirSync(bin, { mode: 0o755 });
  addServerWarm(home, 'planter', [NODE, path.join(SERVERS, 'attack33/engine-planter.mjs')]);
  addServerWarm(home, 'victim', [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]);
  for (const set of [cli(home, ['sandbox', 'planter', '--network', 'none', '--allow-write', bin]), cli(home, ['sandbox', 'victim', '--network', 'none'])]) expect(set.code, set.stderr).toBe(0);
  // The grant was set while its directory was not on the trusted path (`sandbox` refuses one that is: see
  // grant-policy.test.ts); the operator puts it first on the path afterwards, by hand.
  const file = path.join(home, 'servers.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8'));
  config.path = `${bin}:/usr/local/bin:/usr/bin:/bin`;
  fs.writeFileSync(file, JSON.stringify(config, null, 2));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("a write grant over a directory where the warden looks up its engine", () => {
  it('refuses the launch of a server granted a directory of the trusted path (SANDBOX_UNAVAILABLE), as one granted the engine itself', () => {
    const r = cli(home, ['verify', 'planter']);
    expect(r.code).toBe(3);
    expect(r.stderr + r.stdout).toContain('SANDBOX_UNAVAILABLE');
    expect(auditEvents(home).filter((e) => e.event === 'launch' && e.server === 'planter').at(-1)).toMatchObject({ decision: 'refuse', code: 'SANDBOX_UNAVAILABLE' });
  });

  it("never runs a bwrap a confined server wrote: another server's next sandboxed launch uses the real one, and the planted file never runs", async () => {
    let outcome: string;
    try {
      const { client } = await connectClient(home, 'planter');
      try {
        outcome = ((await client.callTool({ name: 'plant', arguments: { dir: bin, marker, real: bwrap } })) as { content: { text: string }[] }).content[0]?.text ?? '';
      } finally {
        await client.close();
      }
    } catch (err) {
      outcome = `refused ${(err as { data?: { code?: string } }).data?.code}`;
    }
    expect([`planted ${path.join(bin, 'bwrap')}`, 'refused SANDBOX_UNAVAILABLE']).toContain(outcome);
    cli(home, ['verify', 'victim']);
    expect(fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '').toBe('');
    expect(auditEvents(home).filter((e) => e.event === 'launch' && e.server === 'victim').at(-1)).toMatchObject({ sandbox: { state: 'confined', engine: bwrap } });
  });

  it('never takes the engine from a directory a server may write, even when that server was launched before the directory joined the trusted path and planted a bwrap there: the next launch uses the real one', async () => {
    const file = path.join(home, 'servers.json');
    const config = JSON.parse(fs.readFileSync(file, 'utf8'));
    const withBin = config.path;
    fs.writeFileSync(file, JSON.stringify({ ...config, path: '/usr/local/bin:/usr/bin:/bin' }, null, 2));
    const { client } = await connectClient(home, 'planter');
    let planted: string;
    try {
      // The planter runs; the operator then puts its granted directory first on the trusted path.
      fs.writeFileSync(file, JSON.stringify({ ...config, path: withBin }, null, 2));
      planted = ((await client.callTool({ name: 'plant', arguments: { dir: bin, marker, real: bwrap } })) as { content: { text: string }[] }).content[0]?.text ?? '';
    } finally {
      await client.close();
    }
    expect(planted).toBe(`planted ${path.join(bin, 'bwrap')}`);
    const r = cli(home, ['verify', 'victim']);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '').toBe('');
    expect(auditEvents(home).filter((e) => e.event === 'launch' && e.server === 'victim').at(-1)).toMatchObject({ decision: 'allow', sandbox: { state: 'confined', engine: bwrap } });
  });
});
