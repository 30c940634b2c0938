import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownCgroup, writableCgroup } from '../helpers/cgroup.js';
import { requireHost } from '../helpers/host.js';
import { INITIALIZE, RawSession, SERVERS, addServer, alive, auditEvents, tempDir } from '../helpers/warden.js';

// ADR 0033 holds a launch at the module guard's gate, spawned outside the session's cgroup and moved in after
// spawn, when `resolved.gated`: when the interpreter's file is *named* node (interpreterFamily) and its options
// load nothing. The ADR's argument is that node runs none of the server's code before the preload's gate read.
// But the executable is whatever was attested under that name: a server's own program called "node" (a package
// that ships its runtime, a trojaned build) runs its own code from its first instruction, outside the cgroup,
// until the warden's write to cgroup.procs lands (an RCU grace period later). test/servers/attack20/fake-node.c
// double-forks a process with its own session and an empty environment as its first act, then serves MCP
// normally: before this change it was born in the session's cgroup and cgroup.kill ended it at close.

let home: string;
let pidFile: string;
const seen = new Set<number>();

/** The escapers reported so far: pid -> the cgroup it was born in. */
function escapers(): Map<number, string> {
  const out = new Map<number, string>();
  const text = fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8') : '';
  for (const line of text.split('\n').filter(Boolean)) {
    const [pid, cgroup = ''] = line.split(' ');
    out.set(Number(pid), cgroup);
    seen.add(Number(pid));
  }
  return out;
}

function killSeen(): void {
  escapers();
  for (const pid of seen) if (alive(pid)) process.kill(pid, 'SIGKILL');
  seen.clear();
}

beforeAll(() => {
  requireHost('cc');
  home = tempDir();
  const bin = path.join(home, 'runtime');
  fs.mkdirSync(bin);
  const fake = path.join(bin, 'node');
  const built = spawnSync('cc', ['-O2', '-o', fake, path.join(SERVERS, 'attack20/fake-node.c')], { encoding: 'utf8' });
  expect(built.status, built.stderr).toBe(0);
  const script = path.join(home, 'server.mjs');
  fs.writeFileSync(script, '// the fake node never reads it\n');
  pidFile = path.join(home, 'escapers');
  const add = addServer(home, 'own-node', [fake, script, pidFile]);
  expect(add.code, add.stderr).toBe(0);
  killSeen(); // what the enrollment launch left
  fs.rmSync(pidFile, { force: true });
});

afterAll(() => {
  killSeen();
  fs.rmSync(home, { recursive: true, force: true });
});

// Only a host where the warden makes a session cgroup has the claim to break.
describe.skipIf(writableCgroup() === undefined)('a server whose attested executable is named node but is not node', () => {
  it('a process it starts as its very first act is born in its session cgroup and is ended at close', async () => {
    const s = new RawSession(home, 'own-node');
    s.send(INITIALIZE + '\n');
    const init = await s.message(1);
    expect(init.result).toBeDefined();
    const [[pid, bornIn]] = [...escapers()] as [[number, string]];
    s.close();
    expect((await s.exited).code).toBe(0);
    const exit = auditEvents(home).filter((e) => e.event === 'exit' && e.server === 'own-node').pop();
    expect(exit?.containment).toContain('cgroup');
    // The session's cgroup is mcp-warden-<warden pid>-<hex> below ours.
    const session = new RegExp(`^${path.posix.join(ownCgroup() as string, `mcp-warden-${s.proc.pid}-`)}[0-9a-f]{16}$`);
    expect({ pid, bornIn, bornInSessionCgroup: session.test(bornIn), aliveAfterClose: alive(pid) }).toEqual({ pid, bornIn, bornInSessionCgroup: true, aliveAfterClose: false });
  });
});
