import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WardenMetrics } from '../../src/daemon/metrics.js';
import { PROBE, enrollProbe, probeDir, requireBwrap } from '../helpers/probe-home.js';
import { INITIALIZE, ROOT, RawSession, auditEvents, cli, connectClient, launchCount, sessionLaunch } from '../helpers/warden.js';
import { writeTracingOff } from '../helpers/write-tracing.js';

// A server with `network: { "domains": [...] }` (src/sandbox/egress.ts, docs/adr/0060-egress-proxy.md): its own
// network namespace, and the warden's proxy on its loopback (HTTPS_PROXY), which carries only what a grant names.
// The hostile test/servers/sandbox-probe.mjs asks the proxy for tunnels and tries to go around it. No test
// leaves this host: the granted "domain" is localhost:PORT, an HTTP server of the test on the host's loopback.
// enroll() sets servers.json's "writeTracing": "off" but for the first test, whose write into a read grant is seen
// by a root warden's bpftrace: the others prove what the proxy and the namespace let through, never the report of
// denied writes (test/sandbox/write-denials*.test.ts), and bpftrace at each confined launch as root costs ~0.5 s.

beforeAll(requireBwrap);

let dir: string;
let home: string;
let env: Record<string, string>;
let site: http.Server;
let port: number;
let other: http.Server;
let otherPort: number;
let requests: string[];

const listen = async (s: http.Server): Promise<number> => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return (s.address() as net.AddressInfo).port;
};

beforeEach(async () => {
  ({ dir, home, env } = probeDir('warden-egress-'));
  requests = [];
  site = http.createServer((req, res) => (requests.push(`granted ${req.url}`), res.end('hello from the host')));
  other = http.createServer((req, res) => (requests.push(`other ${req.url}`), res.end('should not be reached')));
  port = await listen(site);
  otherPort = await listen(other);
});
afterEach(async () => {
  await Promise.all([site, other].map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
  fs.rmSync(dir, { recursive: true, force: true });
});

const warden = (...args: string[]) => cli(home, args, { env });

function enroll(sandboxFlags: string[], tracing: 'auto' | 'off' = 'off'): void {
  enrollProbe({ dir, home, user: path.join(dir, 'user'), env });
  const set = warden('sandbox', 'probe', ...sandboxFlags);
  expect(set.code, set.stderr).toBe(0);
  if (tracing === 'off') writeTracingOff(home);
}

async function probes(calls: [string, Record<string, unknown>][]): Promise<{ out: string[]; stderr: string }> {
  const { client, stderr } = await connectClient(home, 'probe', env);
  try {
    const out: string[] = [];
    for (const [name, args] of calls) out.push(((await client.callTool({ name, arguments: args })) as { content: { text: string }[] }).content[0]?.text ?? '');
    return { out, stderr: stderr() };
  } finally {
    await client.close();
  }
}

const denials = () => auditEvents(home).filter((e) => e.event === 'sandbox_denied');

describe('a server granted network domains', () => {
  it('reaches a granted localhost:PORT through the proxy; a port or name not granted is refused 403, each one sandbox_denied event and alert; its path grants, bound from descriptors after the proxy\'s, hold', async () => {
    for (const d of ['granted', 'readable']) fs.mkdirSync(path.join(dir, d));
    fs.writeFileSync(path.join(dir, 'readable/note'), 'readable\n');
    enroll(['--allow-domain', `localhost:${port}`, '--allow-write', path.join(dir, 'granted'), '--allow-read', path.join(dir, 'readable')], 'auto');
    const config = JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8'));
    config.alerts = [{ type: 'stderr' }];
    fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify(config, null, 2));
    const after = launchCount(home);
    const { out, stderr } = await probes([
      ['proxy', { host: 'localhost', port }],
      ['proxy', { host: 'localhost', port: otherPort }],
      ['proxy', { host: 'evil.example.com', port: 443 }],
      ['write', { path: path.join(dir, 'granted/file') }],
      ['read', { path: path.join(dir, 'readable/note') }],
      ['write', { path: path.join(dir, 'readable/file') }],
    ]);
    expect(out).toEqual(['ok: HTTP/1.1 200 OK hello from the host', 'refused: HTTP/1.1 403 Forbidden', 'refused: HTTP/1.1 403 Forbidden', 'ok: written', 'ok: 9 bytes', 'denied: EROFS']);
    expect(fs.readdirSync(path.join(dir, 'granted'))).toEqual(['file']);
    expect(requests).toEqual(['granted /']);
    expect(denials().map(({ ts: _ts, prev: _prev, ...e }) => e)).toEqual([
      { event: 'sandbox_denied', server: 'probe', kind: 'connect', host: 'localhost', port: otherPort, reason: 'not_granted' },
      { event: 'sandbox_denied', server: 'probe', kind: 'connect', host: 'evil.example.com', port: 443, reason: 'not_granted' },
      // the write into a read grant, seen by a root warden's bpftrace (docs/adr/0066)
      { event: 'sandbox_denied', server: 'probe', kind: 'write', path: path.join(dir, 'readable/file'), call: 'openat', errno: 'EROFS' },
    ]);
    expect(stderr).toContain(`mcp-warden ALERT sandbox_denied server=probe kind=connect host=localhost port=${otherPort} reason=not_granted`);
    expect(await sessionLaunch(home, { after })).toMatchObject({ decision: 'allow', sandbox: { state: 'confined', network: 'domains', domains: [`localhost:${port}`] } });
    const status = JSON.parse(warden('status', 'probe', '--json').stdout).servers[0].sandbox;
    expect(status).toMatchObject({ state: 'confined', network: 'domains', launchable: true });
    expect(status.denied.map((d: { kind: string; host?: string; port?: number; path?: string }) => (d.kind === 'write' ? d.path : `${d.host}:${d.port}`))).toEqual([path.join(dir, 'readable/file'), 'evil.example.com:443', `localhost:${otherPort}`]);
    expect(warden('status', 'probe').stdout).toContain(`denied connect evil.example.com:443 (not_granted)`);
  });

  it("cannot go around the proxy: the host's loopback, the warden's daemon socket and an abstract socket of the host are unreachable", async () => {
    enroll(['--allow-domain', `localhost:${port}`]);
    const abstract = net.createServer((s) => s.end());
    const name = `\0warden-egress-test-${process.pid}`;
    await new Promise<void>((r) => abstract.listen(name, () => r()));
    try {
      const { out } = await probes([
        ['connect', { host: '127.0.0.1', port }],
        ['connect', { path: path.join(home, 'daemon.sock') }],
        ['connect', { path: name }],
        ['whoami', {}],
      ]);
      expect(out.slice(0, 3)).toEqual(['denied: ECONNREFUSED', 'denied: ENOENT', 'denied: ECONNREFUSED']);
      expect(JSON.parse(out[3] as string)).toMatchObject({ proxy: 'http://127.0.0.1:3128' });
      expect(requests).toEqual([]);
    } finally {
      await new Promise((r) => abstract.close(r));
    }
  });

  it('records 64 denials in a session, then one reports_capped event; the rest are refused all the same', async () => {
    enroll(['--allow-domain', `localhost:${port}`]);
    const { out } = await probes([['proxy', { host: 'localhost', port: otherPort, times: 70 }]]);
    expect(out).toEqual(['refused: HTTP/1.1 403 Forbidden']);
    expect(denials()).toHaveLength(64);
    expect(auditEvents(home).filter((e) => e.event === 'reports_capped')).toMatchObject([{ server: 'probe', report: 'sandbox_denied', cap: 64 }]);
    expect(requests).toEqual([]);
  });

  it('leaves nothing behind: once the session ends, no process holds the sandbox\'s network namespace', async () => {
    enroll(['--allow-domain', `localhost:${port}`]);
    const s = new RawSession(home, 'probe', env);
    s.send(INITIALIZE + '\n');
    await s.message(1);
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } }) + '\n');
    const who = JSON.parse(((await s.message(2)).result as { content: { text: string }[] }).content[0]?.text ?? '{}') as { netns: string };
    expect(who.netns).toMatch(/^net:\[\d+\]$/);
    const holders = (): number[] =>
      fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
        try {
          return fs.readlinkSync(`/proc/${p}/ns/net`) === who.netns;
        } catch {
          return false;
        }
      }).map(Number);
    expect(holders().length).toBeGreaterThan(0);
    s.close();
    expect((await s.exited).code).toBe(0);
    expect(holders()).toEqual([]);
  });
});

describe("a node server's own fetch", () => {
  it('on node 24 goes through the proxy (NODE_USE_ENV_PROXY=1 is set for it): a granted host answers, another is refused', async () => {
    const node24 = path.join(ROOT, 'test/nodes/node_modules/node24/bin/node');
    const add = warden('add', 'probe', '--yes', '--', node24, PROBE);
    expect(add.code, add.stderr).toBe(0);
    expect(warden('sandbox', 'probe', '--allow-domain', `localhost:${port}`).code).toBe(0);
    const { out } = await probes([
      ['fetch', { url: `http://localhost:${port}/by-fetch` }],
      ['fetch', { url: `http://localhost:${otherPort}/by-fetch` }],
    ]);
    expect(out[0]).toBe('ok: 200 hello from the host');
    expect(out[1]).toMatch(/^denied: /);
    expect(requests).toEqual(['granted /by-fetch']);
    expect(denials()).toMatchObject([{ host: 'localhost', port: otherPort, reason: 'not_granted' }]);
  });
});

describe('a sandbox with domains is applied or the launch refused', () => {
  /** A trusted path of bwrap and the given nsenter only. */
  function onlyPath(nsenter: string | undefined): void {
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin, { mode: 0o755 });
    fs.symlinkSync(fs.realpathSync('/usr/bin/bwrap'), path.join(bin, 'bwrap'));
    if (nsenter !== undefined) fs.writeFileSync(path.join(bin, 'nsenter'), nsenter, { mode: 0o755 });
    const file = path.join(home, 'servers.json');
    const config = JSON.parse(fs.readFileSync(file, 'utf8'));
    config.path = bin;
    fs.writeFileSync(file, JSON.stringify(config, null, 2));
  }

  it('without nsenter on the trusted path the launch is refused (SANDBOX_ENGINE_MISSING), naming util-linux', () => {
    enroll(['--allow-domain', `localhost:${port}`]);
    onlyPath(undefined);
    const r = warden('verify', 'probe');
    expect(r.code).toBe(3);
    expect(r.stderr + r.stdout).toMatch(/SANDBOX_ENGINE_MISSING: .*nsenter \(util-linux\)/);
    expect(auditEvents(home).filter((e) => e.event === 'launch').at(-1)).toMatchObject({ decision: 'refuse', code: 'SANDBOX_ENGINE_MISSING' });
  });

  it('a proxy listener that cannot start, or starts outside the sandbox\'s namespace, refuses the launch (SANDBOX_UNAVAILABLE), never with the host\'s network', () => {
    enroll(['--allow-domain', `localhost:${port}`]);
    const marker = path.join(dir, 'ran');
    onlyPath('#!/bin/sh\nexit 1\n');
    const failed = warden('verify', 'probe');
    expect(failed.code).toBe(3);
    expect(failed.stderr + failed.stdout).toMatch(/SANDBOX_UNAVAILABLE: the network proxy of server 'probe' could not be started: .*nsenter exited \(1\)/);
    // An nsenter that enters nothing: the listener would be on the host's loopback, which the warden refuses.
    fs.writeFileSync(path.join(dir, 'bin/nsenter'), `#!/bin/sh\ntouch ${marker}\nwhile [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n`);
    const outside = warden('verify', 'probe');
    expect(outside.code).toBe(3);
    expect(outside.stderr + outside.stdout).toMatch(/SANDBOX_UNAVAILABLE: the network proxy of server 'probe' could not be started: the listener failed: another network namespace than the sandbox's/);
    expect(fs.existsSync(marker)).toBe(true);
    const refused = auditEvents(home).filter((e) => e.event === 'launch').slice(-2);
    expect(refused).toMatchObject([{ decision: 'refuse', code: 'SANDBOX_UNAVAILABLE' }, { decision: 'refuse', code: 'SANDBOX_UNAVAILABLE' }]);
    expect(auditEvents(home).filter((e) => e.event === 'launch' && e.decision === 'allow' && (e.sandbox as { network?: string })?.network === 'domains')).toEqual([]);
  });
});

describe('the metric of sandbox denials', () => {
  it('counts each sandbox_denied event a session sends the daemon, by server and kind (connect, write), never the host or path', async () => {
    const metrics = new WardenMetrics();
    metrics.observe({ event: 'sandbox_denied', server: 'probe', kind: 'connect', host: 'evil.example.com', port: 443, reason: 'not_granted' });
    metrics.observe({ event: 'sandbox_denied', server: 'probe', kind: 'connect', host: 'localhost', port: 8080, reason: 'not_granted' });
    metrics.observe({ event: 'sandbox_denied', server: 'probe', kind: 'write', path: '/usr/evil', call: 'openat', errno: 'EROFS' });
    const text = await metrics.registry.metrics();
    expect(text).toContain('mcp_warden_sandbox_denied_total{server="probe",kind="connect"} 2');
    expect(text).toContain('mcp_warden_sandbox_denied_total{server="probe",kind="write"} 1');
    expect(text).not.toContain('evil.example.com');
    expect(text).not.toContain('/usr/evil');
  });
});
