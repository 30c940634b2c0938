import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IN_THREAD_NODES } from '../helpers/nodes.js';
import { addedHome } from '../helpers/run-template.js';
import { NODE, SERVERS, auditEvents, cli, connectClient, launchCount, sessionLaunch } from '../helpers/warden.js';
import { writeTracingOff } from '../helpers/write-tracing.js';

// The warden's own checks hold for a confined server (docs/adr/0050-sandbox-engine.md): bwrap starts the server
// as its grandchild, yet the executed inode checked is the server's, a program the server hands its stdout to
// is still refused (bwrap's own processes hold it, and pass only by pid and inode), the module guard's gate on
// fd 3 still releases and refuses, and the whole sandbox is gone when the session ends. Each home sets
// servers.json's "writeTracing": "off": none of these claims is the report of denied writes (its own tests:
// test/sandbox/write-denials*.test.ts), and bpftrace at each confined launch as root cost ~0.5 s of wall each.

beforeAll(() => {
  if (!['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'].some((f) => fs.existsSync(f))) throw new Error('bubblewrap (bwrap) is missing on this host: apt-get install bubblewrap (README, "Test")');
});

let dir: string;
let home: string;
beforeEach(() => {
  dir = fs.mkdtempSync('/var/tmp/warden-sandbox-');
  home = path.join(dir, 'home');
  fs.mkdirSync(path.join(dir, 'granted'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** `id` added (a copy of the run's one add of that command line, addedHome, unless it names this test's
 *  directory), then given the sandbox `flags`. */
function enroll(id: string, argv: string[], flags: string[] = ['--network', 'none']): void {
  if (argv.some((a) => a.startsWith(dir))) {
    const add = cli(home, ['add', id, '--yes', '--', ...argv]);
    expect(add.code, add.stderr).toBe(0);
  } else {
    addedHome(home, id, argv);
  }
  const set = cli(home, ['sandbox', id, ...flags]);
  expect(set.code, set.stderr).toBe(0);
  writeTracingOff(home);
}

const launches = (id: string) => auditEvents(home).filter((e) => e.event === 'launch' && e.server === id);
const nsOf = (pid: number): string | undefined => {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
};
const running = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};
/** The live (not zombie) processes of a pid namespace. */
const inNamespace = (ns: string): number[] =>
  fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number).filter((pid) => nsOf(pid) === ns && running(pid));

describe('the checks of a launch hold inside the sandbox', () => {
  it("the launch records the server's own pid, which runs the digested node inside its own pid namespace", async () => {
    enroll('probe', [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]);
    const after = launchCount(home, 'probe');
    const { client } = await connectClient(home, 'probe');
    try {
      const who = JSON.parse(((await client.callTool({ name: 'whoami', arguments: {} })) as { content: { text: string }[] }).content[0]?.text ?? '{}') as { pid: number; cwd: string; tmpdir: string };
      const launch = (await sessionLaunch(home, { server: 'probe', after })) as { serverPid: number; pid: number };
      expect(fs.realpathSync(`/proc/${launch.serverPid}/exe`)).toBe(fs.realpathSync(NODE));
      expect(nsOf(launch.serverPid)).not.toBe(nsOf(process.pid));
      expect(who.pid).not.toBe(launch.serverPid); // the server sees its pid in its own namespace
      expect(who.cwd).toBe(path.join(home, 'data/probe'));
      expect(who.tmpdir).toBe('/tmp');
    } finally {
      await client.close();
    }
  });

  it("a confined python script passes the leader's command-line check (bwrap runs it with its path as argv[0])", () => {
    enroll('py', ['/usr/bin/python3', path.join(SERVERS, 'interp/server.py')]);
    const r = cli(home, ['verify', 'py']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(launches('py').at(-1)).toMatchObject({ decision: 'allow', sandbox: { state: 'confined' } });
  });

  it('a confined server that hands its stdout to another program is still stopped (STREAM_HELD_ELSEWHERE)', async () => {
    enroll('handoff', [NODE, path.join(SERVERS, 'stdio-handoff.mjs')]);
    const { client, stderr } = await connectClient(home, 'handoff');
    const closed = new Promise<void>((resolve) => (client.onclose = resolve));
    await client.callTool({ name: 'handoff', arguments: {} });
    await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error(`session not stopped: ${stderr()}`)), 10_000))]);
    expect(stderr()).toContain('STREAM_HELD_ELSEWHERE');
    expect(stderr()).toMatch(/process \d+ \(\/(usr\/)?bin\/dash\) holds the stdout/);
    expect(launches('handoff').some((e) => e.decision === 'refuse' && e.code === 'STREAM_HELD_ELSEWHERE')).toBe(true);
  });

  it("descendants that leave the server's group are gone with the sandbox's pid namespace when the session ends", async () => {
    const pids = path.join(dir, 'granted/pids');
    enroll('escaper', [NODE, path.join(SERVERS, 'escaper.mjs'), pids, 'detached,setsid,orphan'], ['--network', 'none', '--allow-write', path.join(dir, 'granted')]);
    const after = launchCount(home, 'escaper');
    const { client } = await connectClient(home, 'escaper');
    const launch = (await sessionLaunch(home, { server: 'escaper', after })) as { serverPid: number };
    const ns = nsOf(launch.serverPid) as string;
    expect(ns).toBeDefined();
    const deadline = Date.now() + 15_000;
    while ((fs.existsSync(pids) ? fs.readFileSync(pids, 'utf8').trim().split('\n').length : 0) < 3) {
      if (Date.now() > deadline) throw new Error(`the escapers did not report: ${fs.existsSync(pids) ? fs.readFileSync(pids, 'utf8') : '(no file)'}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(inNamespace(ns).length).toBeGreaterThan(3);
    await client.close();
    const exit = auditEvents(home).filter((e) => e.event === 'exit' && e.server === 'escaper').at(-1);
    expect(exit).toMatchObject({ groupGone: true });
    expect(inNamespace(ns)).toEqual([]);
  });

  it.each([[`node ${process.versions.node} (this one)`, NODE], ...IN_THREAD_NODES])('on %s, the module guard releases a confined server and refuses a module outside its set', async (_label, node) => {
    const outside = path.join(dir, 'granted/outside.mjs');
    fs.writeFileSync(outside, 'export default "outside code ran";\n');
    enroll('probe', [node, path.join(SERVERS, 'sandbox-probe.mjs')], ['--network', 'none', '--allow-read', path.join(dir, 'granted')]);
    const { client } = await connectClient(home, 'probe');
    try {
      await expect(client.callTool({ name: 'load', arguments: { path: outside } })).rejects.toThrow("server 'probe' was ended by the warden's module guard");
    } finally {
      await client.close();
    }
    expect(auditEvents(home).filter((e) => e.event === 'module_refused' && e.server === 'probe').at(-1)).toMatchObject({ server: 'probe' });
  });
});
