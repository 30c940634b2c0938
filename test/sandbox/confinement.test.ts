import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pinByHand } from '../helpers/pin-by-hand.js';
import { PROBE, enrollProbe, probeDir, requireBwrap } from '../helpers/probe-home.js';
import { FILESYSTEM, MEMORY, NODE, SERVERS, auditEvents, cli, connectClient, launchCount, sessionLaunch } from '../helpers/warden.js';
import { writeTracingOff } from '../helpers/write-tracing.js';

// A server with a sandbox (src/sandbox/, docs/guide.md "Confining a server"), launched for real under
// bubblewrap: the hostile test/servers/sandbox-probe.mjs tries what a confined server must not do, each
// attempt answered by the kernel inside the sandbox. The scratch tree is under /var/tmp, not /tmp: the sandbox
// gives the server a private /tmp, which would hide a tree there whatever the sandbox says of the home.
// Each home sets servers.json's "writeTracing": "off": what is proven here is what the kernel refuses inside the
// sandbox, never the report of denied writes (test/sandbox/write-denials*.test.ts), and bpftrace started at each
// confined launch as root cost this file ~0.5 s of wall per launch.

beforeAll(requireBwrap);

let dir: string;
let home: string;
let user: string;
let env: Record<string, string>;

beforeEach(() => {
  ({ dir, home, user, env } = probeDir('warden-sandbox-'));
  fs.mkdirSync(path.join(user, 'projects'));
  fs.writeFileSync(path.join(user, 'projects/notes.txt'), 'notes\n');
  for (const d of ['granted', 'outside']) fs.mkdirSync(path.join(dir, d));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const warden = (...args: string[]) => cli(home, args, { env });

function enroll(id: string, argv: string[], sandboxFlags: string[]): void {
  if (id === 'probe' && argv.length === 1 && argv[0] === PROBE) {
    enrollProbe({ dir, home, user, env }); // added once per run, each test getting a copy of that home
  } else {
    const add = warden('add', id, '--yes', '--', NODE, ...argv);
    expect(add.code, add.stderr).toBe(0);
  }
  const set = warden('sandbox', id, ...sandboxFlags);
  expect(set.code, set.stderr).toBe(0);
  writeTracingOff(home);
}

async function probe(id: string, tool: string, args: Record<string, unknown> = {}): Promise<string> {
  const { client } = await connectClient(home, id, env);
  try {
    const r = (await client.callTool({ name: tool, arguments: args })) as { content: { text: string }[] };
    return r.content[0]?.text ?? '';
  } finally {
    await client.close();
  }
}

/** Several calls in one session, answers in order. */
async function probes(id: string, calls: [string, Record<string, unknown>][]): Promise<string[]> {
  const { client } = await connectClient(home, id, env);
  try {
    const out: string[] = [];
    for (const [name, args] of calls) out.push(((await client.callTool({ name, arguments: args })) as { content: { text: string }[] }).content[0]?.text ?? '');
    return out;
  } finally {
    await client.close();
  }
}

const launches = (id: string) => auditEvents(home).filter((e) => e.event === 'launch' && e.server === id);

describe('a confined server', () => {
  it("cannot read the user's ~/.ssh/id_rsa (an empty decoy is there) nor another file of the home, and reads the part of the home read.allow grants", async () => {
    fs.writeFileSync(path.join(user, '.ssh/known_hosts'), 'host key\n');
    enroll('probe', [PROBE], ['--network', 'none', '--allow-read', path.join(user, 'projects')]);
    const after = launchCount(home, 'probe');
    const [key, other, notes] = await probes('probe', [['read', { path: path.join(user, '.ssh/id_rsa') }], ['read', { path: path.join(user, '.ssh/known_hosts') }], ['read', { path: path.join(user, 'projects/notes.txt') }]]);
    expect(key).toBe('ok: 0 bytes'); // test/sandbox/decoys.test.ts: the decoy's read is recorded
    expect(other).toBe('denied: ENOENT');
    expect(notes).toBe('ok: 6 bytes');
    expect(await sessionLaunch(home, { server: 'probe', after })).toMatchObject({ decision: 'allow', sandbox: { state: 'confined', network: 'none', engine: expect.stringMatching(/bwrap$/) } });
  });

  it('writes only to its data directory, its private /tmp and its write grant; elsewhere the write fails read-only', async () => {
    enroll('probe', [PROBE], ['--network', 'none', '--allow-write', path.join(dir, 'granted')]);
    const data = path.join(home, 'data/probe');
    const [inHome, outside, granted, inData, inTmp] = await probes('probe', [
      ['write', { path: path.join(user, 'x') }],
      ['write', { path: path.join(dir, 'outside/x') }],
      ['write', { path: path.join(dir, 'granted/x') }],
      ['write', { path: path.join(data, 'x') }],
      ['write', { path: '/tmp/warden-sandbox-probe-x' }],
    ]);
    expect(inHome).toBe('denied: EROFS');
    expect(outside).toBe('denied: EROFS');
    expect(fs.existsSync(path.join(dir, 'outside/x'))).toBe(false);
    expect(granted).toBe('ok: written');
    expect(fs.readFileSync(path.join(dir, 'granted/x'), 'utf8')).toBe('written by sandbox-probe\n');
    expect(inData).toBe('ok: written');
    expect(fs.readFileSync(path.join(data, 'x'), 'utf8')).toBe('written by sandbox-probe\n');
    expect(fs.statSync(data).mode & 0o777).toBe(0o700);
    expect(inTmp).toBe('ok: written');
    expect(fs.existsSync('/tmp/warden-sandbox-probe-x')).toBe(false);
  });

  it("does not see the warden's home and cannot change its own attested script, even as root; the attestation is unchanged", async () => {
    const script = path.join(dir, 'srv/probe.mjs');
    fs.mkdirSync(path.dirname(script));
    fs.copyFileSync(PROBE, script);
    fs.cpSync(path.join(SERVERS, 'lib'), path.join(dir, 'srv/lib'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'srv/package.json'), '{"type":"module"}\n');
    enroll('probe', [script], ['--network', 'none', '--allow-write', path.join(dir, 'granted')]);
    const before = fs.readFileSync(script);
    const [servers, own, lib] = await probes('probe', [
      ['read', { path: path.join(home, 'servers.json') }],
      ['write', { path: script }],
      ['write', { path: path.join(dir, 'srv/lib/rpc.mjs') }],
    ]);
    expect(servers).toBe('denied: ENOENT');
    expect(own).toBe('denied: EROFS');
    expect(lib).toBe('denied: EROFS');
    expect(fs.readFileSync(script).equals(before)).toBe(true);
    const verify = warden('verify', 'probe');
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);
  });

  it('a write grant over its own files, into the warden home, or through a link, refuses the launch (SANDBOX_UNAVAILABLE)', async () => {
    // Refused when set (sandbox/grant-policy.ts); pinned by hand, as an earlier version could have, for the launch.
    enroll('probe', [PROBE], ['--network', 'none']);
    const ownSet = warden('sandbox', 'probe', '--allow-write', SERVERS);
    expect(ownSet.code).toBe(2);
    expect(ownSet.stderr).toMatch(/SANDBOX_INVALID: the write grant \S+ is, holds or lies inside \S+, the warden's own install/);
    await pinByHand(home, 'probe', { network: 'none', write: [SERVERS], read: { allow: [], deny: [] } });
    const r = warden('verify', 'probe');
    expect(r.code).toBe(3);
    expect(r.stderr + r.stdout).toMatch(/SANDBOX_UNAVAILABLE: .*overlaps the server's own attested/);
    expect(launches('probe').at(-1)).toMatchObject({ decision: 'refuse', code: 'SANDBOX_UNAVAILABLE' });
    const set = warden('sandbox', 'probe', '--clear', '--network', 'none', '--allow-write', path.join(home, 'data'));
    expect(set.code).toBe(2);
    expect(set.stderr).toMatch(/SANDBOX_INVALID: \S+ is, holds or lies inside the warden's home/);
    await pinByHand(home, 'probe', { network: 'none', write: [path.join(home, 'data')], read: { allow: [], deny: [] } });
    const again = warden('verify', 'probe');
    expect(again.code).toBe(3);
    expect(again.stderr + again.stdout).toMatch(/SANDBOX_UNAVAILABLE: .*inside the warden's home/);
    fs.symlinkSync(home, path.join(dir, 'granted/link'));
    // A link into the warden's home is the home itself by device and inode (review 12): refused when set, then
    // pinned by hand for the launch, which refuses it for the link before anything else.
    const linkSet = warden('sandbox', 'probe', '--clear', '--network', 'none', '--allow-write', path.join(dir, 'granted/link'));
    expect(linkSet.code).toBe(2);
    expect(linkSet.stderr).toMatch(/SANDBOX_INVALID: \S+\/granted\/link is, holds or lies inside the warden's home/);
    await pinByHand(home, 'probe', { network: 'none', write: [path.join(dir, 'granted/link')], read: { allow: [], deny: [] } });
    const linked = warden('verify', 'probe');
    expect(linked.code).toBe(3);
    expect(linked.stderr + linked.stdout).toMatch(/SANDBOX_UNAVAILABLE: .*the grant \S+\/granted\/link is or lies under a symbolic link/);
  });
});

describe('the network of a confined server', () => {
  let listener: net.Server;
  let port: number;
  beforeEach(async () => {
    listener = net.createServer((s) => s.end());
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
    port = (listener.address() as net.AddressInfo).port;
  });
  afterEach(() => new Promise<void>((r) => listener.close(() => r())));

  it("with network none, a port on the host's loopback is unreachable", async () => {
    enroll('probe', [PROBE], ['--network', 'none']);
    expect(await probe('probe', 'connect', { host: '127.0.0.1', port })).toBe('denied: ECONNREFUSED');
  });

  it("with network any, the same port is reached (the probe itself can connect)", async () => {
    enroll('probe', [PROBE], ['--network', 'any']);
    expect(await probe('probe', 'connect', { host: '127.0.0.1', port })).toBe('ok: connected');
  });
});

describe('a sandbox is applied or the launch refused', () => {
  it('a sandbox edited by hand and not pinned refuses the launch (SANDBOX_NOT_PINNED, exit 3), audited; --pin accepts it', () => {
    enroll('probe', [PROBE], ['--network', 'none']);
    const file = path.join(home, 'servers.json');
    const json = JSON.parse(fs.readFileSync(file, 'utf8'));
    json.servers.probe.sandbox.network = 'any';
    fs.writeFileSync(file, JSON.stringify(json, null, 2));
    const r = warden('verify', 'probe');
    expect(r.code).toBe(3);
    expect(r.stderr + r.stdout).toContain("SANDBOX_NOT_PINNED: server 'probe' has another sandbox than the one pinned in warden.lock");
    expect(launches('probe').at(-1)).toMatchObject({ decision: 'refuse', code: 'SANDBOX_NOT_PINNED' });
    delete json.servers.probe.sandbox;
    fs.writeFileSync(file, JSON.stringify(json, null, 2));
    const removed = warden('verify', 'probe');
    expect(removed.code).toBe(3);
    expect(removed.stderr + removed.stdout).toContain('has no sandbox, but warden.lock pins one');
    json.servers.probe.sandbox = { network: 'any' };
    fs.writeFileSync(file, JSON.stringify(json, null, 2));
    expect(warden('sandbox', 'probe', '--pin').code).toBe(0);
    expect(warden('verify', 'probe').code).toBe(0);
  });

  it('a sandbox written by hand for a server never locked refuses its first launch, saying how to pin one', () => {
    enroll('probe', [PROBE], ['--network', 'none']);
    const file = path.join(home, 'servers.json');
    const json = JSON.parse(fs.readFileSync(file, 'utf8'));
    json.servers.fresh = { ...json.servers.probe, sandbox: { network: 'any' } };
    fs.writeFileSync(file, JSON.stringify(json, null, 2));
    const r = warden('lock', 'fresh');
    expect(r.code).toBe(3);
    expect(r.stderr + r.stdout).toContain("SANDBOX_NOT_PINNED: server 'fresh' has a sandbox in");
    expect(r.stderr + r.stdout).toContain('but is not locked yet');
    expect(launches('fresh').at(-1)).toMatchObject({ decision: 'refuse', code: 'SANDBOX_NOT_PINNED' });
  });

  it('without bubblewrap on the trusted path the launch is refused (SANDBOX_ENGINE_MISSING, exit 3), naming the package and --unconfined', () => {
    enroll('probe', [PROBE], ['--network', 'none']);
    const file = path.join(home, 'servers.json');
    const json = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.mkdirSync(path.join(dir, 'emptybin'), { mode: 0o755 });
    json.path = path.join(dir, 'emptybin');
    fs.writeFileSync(file, JSON.stringify(json, null, 2));
    const allowed = launches('probe').filter((e) => e.decision === 'allow').length;
    const r = warden('verify', 'probe');
    expect(r.code).toBe(3);
    expect(r.stderr + r.stdout).toMatch(/SANDBOX_ENGINE_MISSING: .*apt-get install bubblewrap.*mcp-warden sandbox probe --unconfined/);
    expect(launches('probe').at(-1)).toMatchObject({ decision: 'refuse', code: 'SANDBOX_ENGINE_MISSING' });
    expect(launches('probe').filter((e) => e.decision === 'allow')).toHaveLength(allowed);
  });

  it('--unconfined is an explicit choice: refused without --yes, audited with it, and the server then runs as before', async () => {
    enroll('probe', [PROBE], ['--network', 'none']);
    const no = warden('sandbox', 'probe', '--unconfined');
    expect(no.code).toBe(2);
    expect(no.stderr).toContain('confirm it with --yes');
    const yes = warden('sandbox', 'probe', '--unconfined', '--yes');
    expect(yes.code, yes.stderr).toBe(0);
    expect(auditEvents(home).filter((e) => e.event === 'sandbox_changed').at(-1)).toMatchObject({ server: 'probe', via: 'cli', state: 'unconfined' });
    const after = launchCount(home, 'probe');
    expect(await probe('probe', 'read', { path: path.join(user, '.ssh/id_rsa') })).toBe('ok: 12 bytes');
    expect(await sessionLaunch(home, { server: 'probe', after })).toMatchObject({ decision: 'allow', sandbox: { state: 'unconfined' } });
  });

  it('a wildcard domain, --network with --allow-domain, the root as a grant and a non-normalized path in servers.json are refused with their codes', () => {
    enroll('probe', [PROBE], ['--network', 'none']);
    const wildcard = warden('sandbox', 'probe', '--allow-domain', '*.example.com');
    expect(wildcard.code).toBe(2);
    expect(wildcard.stderr).toMatch(/SANDBOX_INVALID: .*\/servers\/probe\/sandbox\/network\/domains\/0.*a wildcard \(\*\.\) is not granted/);
    const both = warden('sandbox', 'probe', '--network', 'any', '--allow-domain', 'api.example.com');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--network any and --allow-domain both set the network');
    const root = warden('sandbox', 'probe', '--allow-write', '/');
    expect(root.code).toBe(2);
    expect(root.stderr).toMatch(/SANDBOX_INVALID: .*\/servers\/probe\/sandbox\/write\/0.*the root is never granted whole/);
    const file = path.join(home, 'servers.json');
    const json = JSON.parse(fs.readFileSync(file, 'utf8'));
    json.servers.probe.sandbox.write = ['/var/../etc'];
    fs.writeFileSync(file, JSON.stringify(json, null, 2));
    const bad = warden('verify', 'probe');
    expect(bad.code).toBe(2);
    expect(bad.stderr + bad.stdout).toMatch(/FILE_INVALID: .*\/servers\/probe\/sandbox\/write\/0.*normalized path \(\/etc\)/);
  });

  it('domains in servers.json must be exact names, NAME:PORT or localhost:PORT, and lists are bounded', () => {
    enroll('probe', [PROBE], ['--network', 'none']);
    const file = path.join(home, 'servers.json');
    const write = (sandbox: unknown): void => {
      const json = JSON.parse(fs.readFileSync(file, 'utf8'));
      json.servers.probe.sandbox = sandbox;
      fs.writeFileSync(file, JSON.stringify(json, null, 2));
    };
    const refused = (domains: string[], index: number, why: RegExp): void => {
      write({ network: { domains } });
      const r = warden('verify', 'probe');
      expect(r.code).toBe(2);
      expect(r.stderr + r.stdout).toMatch(new RegExp(`FILE_INVALID: .*/servers/probe/sandbox/network/domains/${index}.*${why.source}`));
    };
    refused(['api.example.com', 'evil..example'], 1, /lower-case letters/);
    refused(['api.example.com', '*.example.org'], 1, /a wildcard \(\*\.\) is not granted/);
    refused(['localhost'], 0, /localhost with a port/);
    refused(['api.example.com:0'], 0, /a port from 1 to 65535/);
    refused(['api.example.com:08080'], 0, /without leading zeros/);
    refused(['10.0.0.1:443'], 0, /not an address/);
    write({ network: 'none', write: Array.from({ length: 65 }, (_, i) => `/srv/p${i}`) });
    const many = warden('verify', 'probe');
    expect(many.code).toBe(2);
    expect(many.stderr + many.stdout).toMatch(/FILE_INVALID: .*\/servers\/probe\/sandbox\/write.*at most 64 paths/);
    write({ network: { domains: ['api.example.com', 'api.example.com:8443', 'localhost:8080'] } });
    expect(warden('sandbox', 'probe', '--pin').code).toBe(0);
    expect(warden('sandbox', 'probe').stdout).toContain("network:    only through the warden's proxy, to api.example.com, api.example.com:8443, localhost:8080");
  });
});

describe('an existing server confined', () => {
  it('server-filesystem limited to one directory reads and writes there', async () => {
    const work = path.join(dir, 'granted');
    enroll('fs', [FILESYSTEM, work], ['--network', 'none', '--allow-write', work]);
    const { client } = await connectClient(home, 'fs', env);
    try {
      await client.callTool({ name: 'write_file', arguments: { path: path.join(work, 'a.txt'), content: 'hello' } });
      const r = (await client.callTool({ name: 'read_text_file', arguments: { path: path.join(work, 'a.txt') } })) as { content: { text: string }[] };
      expect(r.content[0]?.text).toBe('hello');
    } finally {
      await client.close();
    }
    expect(fs.readFileSync(path.join(work, 'a.txt'), 'utf8')).toBe('hello');
  });
});

describe('a server whose dependencies are hoisted where the sandbox hides', () => {
  it('loads them: the directory of every package its tree covers is mounted read-only (a checkout under /tmp)', async () => {
    // A project in a private /tmp of the sandbox's own: node_modules/srv imports node_modules/dep, hoisted.
    const project = fs.mkdtempSync('/tmp/warden-sandbox-project-');
    try {
      const nm = path.join(project, 'node_modules');
      fs.mkdirSync(path.join(nm, 'dep'), { recursive: true });
      fs.writeFileSync(path.join(nm, 'dep/package.json'), JSON.stringify({ name: 'dep', version: '1.0.0', type: 'module', exports: './index.js' }));
      fs.writeFileSync(path.join(nm, 'dep/index.js'), "export const greeting = 'hello from dep';\n");
      fs.mkdirSync(path.join(nm, 'srv/lib'), { recursive: true });
      fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(nm, 'srv/lib/rpc.mjs'));
      fs.writeFileSync(path.join(nm, 'srv/package.json'), JSON.stringify({ name: 'srv', version: '1.0.0', type: 'module', dependencies: { dep: '1.0.0' } }));
      fs.writeFileSync(path.join(nm, 'srv/server.mjs'), `import { greeting } from 'dep';\n${fs.readFileSync(path.join(SERVERS, 'basic.mjs'), 'utf8').replace(/^#!.*\n/, '')}\nprocess.stderr.write(greeting + '\\n');\n`);
      enroll('hoisted', [path.join(nm, 'srv/server.mjs')], ['--network', 'none']);
      const { client, stderr } = await connectClient(home, 'hoisted', env);
      try {
        expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      } finally {
        await client.close();
      }
      expect(stderr()).toContain('hello from dep');
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  });
});

describe('server-memory, which writes memory.jsonl beside its own script', () => {
  const stray = path.join(path.dirname(MEMORY), 'memory.jsonl');
  const entities = { entities: [{ name: 'alice', entityType: 'person', observations: ['likes tea'] }] };

  it('confined, cannot write into its own package: the call fails, and the package and its attestation are unchanged', async () => {
    expect(fs.existsSync(stray)).toBe(false);
    enroll('memory', [MEMORY], ['--network', 'none']);
    const { client } = await connectClient(home, 'memory', env);
    try {
      const r = (await client.callTool({ name: 'create_entities', arguments: entities })) as { isError?: boolean; content: { text: string }[] };
      expect(r.isError).toBe(true);
      expect(r.content[0]?.text).toContain('EROFS');
    } finally {
      await client.close();
    }
    expect(fs.existsSync(stray)).toBe(false);
    const verify = warden('verify', 'memory');
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);
  });

  it('confined with MEMORY_FILE_PATH in its data directory, keeps its memory there', async () => {
    const file = path.join(home, 'data/memory/memory.jsonl');
    const add = warden('add', 'memory', '--yes', '--env', `MEMORY_FILE_PATH=${file}`, '--', NODE, MEMORY);
    expect(add.code, add.stderr).toBe(0);
    expect(warden('sandbox', 'memory', '--network', 'none').code).toBe(0);
    writeTracingOff(home);
    const { client } = await connectClient(home, 'memory', env);
    try {
      const r = (await client.callTool({ name: 'create_entities', arguments: entities })) as { isError?: boolean };
      expect(r.isError).not.toBe(true);
    } finally {
      await client.close();
    }
    expect(fs.readFileSync(file, 'utf8')).toContain('"name":"alice"');
    expect(fs.existsSync(stray)).toBe(false);
  });
});

describe('status shows the sandbox', () => {
  it('its network level, a sandbox not pinned, and the last launch it refused', () => {
    enroll('probe', [PROBE], ['--network', 'none']);
    const json = () => JSON.parse(warden('status', 'probe', '--json').stdout) as { servers: { sandbox: Record<string, unknown> }[] };
    expect(json().servers[0]?.sandbox).toEqual({ state: 'confined', network: 'none', pin: 'pinned', launchable: true });
    expect(warden('status').stdout).toMatch(/probe +allowed +network none /);
    const file = path.join(home, 'servers.json');
    const config = JSON.parse(fs.readFileSync(file, 'utf8'));
    config.servers.probe.sandbox.network = 'any';
    fs.writeFileSync(file, JSON.stringify(config, null, 2));
    expect(warden('verify', 'probe').code).toBe(3);
    const st = warden('status', 'probe', '--json');
    expect(st.code).toBe(1);
    expect(JSON.parse(st.stdout).servers[0].sandbox).toMatchObject({ state: 'confined', network: 'any', pin: 'changed', launchable: false, lastRefusal: { code: 'SANDBOX_NOT_PINNED' } });
    expect(warden('status', 'probe').stdout).toMatch(/sandbox +NOT PINNED; last launch refused SANDBOX_NOT_PINNED at /);
  });
});
