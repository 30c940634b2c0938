import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { statKey } from '../../src/attest/stat-key.js';
import { foreignHolders, readStreamEnds } from '../../src/launch/stream-holders.js';
import { INITIALIZE, RawSession, SERVERS, auditEvents, cli, connectClient, tempDir } from '../helpers/warden.js';

// A wrapper that starts the server as a child and stays (`timeout 1d node server.mjs`, flock, a launcher):
// the warden attested the wrapper, /proc/PID/exe stays the wrapper, and the node server it forks was neither
// digested nor guarded. Known wrappers are refused before anything runs; any other program whose child holds
// the server's stdio is stopped before the child's first line is relayed.

const NODE = process.execPath;
let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-wrapper-');
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function launchEvents(): Record<string, unknown>[] {
  return auditEvents(home).filter((e) => e.event === 'launch');
}

describe('a known wrapper in front of the server', () => {
  it('refuses `timeout 1d node server.mjs` at add before running anything, naming the command to add instead', () => {
    const marker = path.join(dir, 'marker');
    const server = path.join(dir, 'server.mjs');
    fs.writeFileSync(server, `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'ran');\n`);
    const r = cli(home, ['add', 'wrapped', '--yes', '--', 'timeout', '1d', NODE, server]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('WRAPPER_COMMAND');
    expect(r.stderr).toContain(`mcp-warden add wrapped -- ${NODE} ${server}`);
    expect(fs.existsSync(marker)).toBe(false);
    expect(fs.existsSync(path.join(home, 'servers.json')) ? fs.readFileSync(path.join(home, 'servers.json'), 'utf8') : '').not.toContain('wrapped');
  });

  it.each([
    ['flock', ['/tmp/x.lock', 'node', 's.mjs'], 'node s.mjs'],
    ['env', ['FOO=1', 'node', 's.mjs'], 'node s.mjs'],
    ['docker', ['run', '-i', 'mcp/fetch'], '<program>'],
    ['busybox', ['sh', 's.sh'], 'sh s.sh'],
    ['/lib64/ld-linux-x86-64.so.2', ['/usr/bin/node', 's.mjs'], '/usr/bin/node s.mjs'],
  ])('refuses %s with the command line it wraps in the advice', (wrapper, args, advice) => {
    const r = cli(home, ['add', 'w', '--yes', '--', wrapper, ...args]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('WRAPPER_COMMAND');
    expect(r.stderr).toContain(`mcp-warden add w -- ${advice}`);
  });
});

describe('a program whose child holds the server stdout', () => {
  let script: string;
  beforeEach(() => {
    // Not a known wrapper: a shell script that runs node without exec, so sh stays and node is its child.
    script = path.join(dir, 'start-server');
    fs.writeFileSync(script, `#!/bin/sh\n${NODE} ${path.join(SERVERS, 'basic.mjs')}\nexit $?\n`, { mode: 0o755 });
  });

  it('has its enrollment launch stopped, naming the child and the command to add instead', () => {
    const r = cli(home, ['add', 'forks', '--yes', '--', script]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout + r.stderr).toContain(`enroll the command that child runs instead: mcp-warden add forks -- ${NODE}`);
    expect(r.stdout + r.stderr).toMatch(new RegExp(`process \\d+ \\(${NODE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)`));
    expect(launchEvents().some((e) => e.decision === 'refuse' && e.code === 'STREAM_HELD_ELSEWHERE')).toBe(true);
  });

  it('never has a line of the child relayed by run', async () => {
    fs.mkdirSync(home, { mode: 0o700 });
    fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify({ version: 1, servers: { forks: { command: script } } }), { mode: 0o600 });
    expect(cli(home, ['allowlist', 'add', script]).code).toBe(0);
    expect(cli(home, ['allowlist', 'add', fs.realpathSync('/bin/sh')]).code).toBe(0);
    const s = new RawSession(home, 'forks');
    s.send(INITIALIZE + '\n');
    const answer = await s.message(1);
    s.close();
    expect((await s.exited).code).toBe(3);
    expect(answer.result).toBeUndefined();
    expect(answer.error).toMatchObject({ message: expect.stringContaining('holds the stdout of server') });
    expect(s.lines()).toHaveLength(1);
  });
});

describe('a digested server that hands its stdout to another program mid-session', () => {
  it('is stopped once the other program writes, and the stop is audited', async () => {
    const r = cli(home, ['add', 'handoff', '--yes', '--', NODE, path.join(SERVERS, 'stdio-handoff.mjs')]);
    expect(r.code, r.stderr).toBe(0);
    const { client, stderr } = await connectClient(home, 'handoff');
    const closed = new Promise<void>((resolve) => (client.onclose = resolve));
    await client.callTool({ name: 'handoff', arguments: {} });
    await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error(`session not stopped: ${stderr()}`)), 10_000))]);
    expect(stderr()).toContain('STREAM_HELD_ELSEWHERE');
    expect(launchEvents().some((e) => e.decision === 'refuse' && e.code === 'STREAM_HELD_ELSEWHERE')).toBe(true);
  });
});

function exeOf(pid: number | undefined): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return undefined;
  }
}

describe('foreignHolders', () => {
  it('finds a child of another program holding the stdout, and not a fork of the program itself', async () => {
    const sh = fs.realpathSync('/bin/sh');
    const expected = statKey(fs.statSync(sh, { bigint: true }));
    // Each script's child prints "ready" once it runs (cat echoes what it is sent), so it is looked at only then.
    const run = async (script: string): Promise<number[]> => {
      const child = spawn(sh, ['-c', script], { stdio: ['pipe', 'pipe', 'ignore'] });
      await new Promise((resolve) => child.once('spawn', resolve));
      const ends = readStreamEnds(child.pid as number);
      child.stdin.write('ready\n');
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('the child never said ready')), 5_000);
        child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && (clearTimeout(t), resolve()));
      });
      const kids = fs.readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      // A child started in the background may not have exec'd yet: wait (bounded) until it runs what it was told.
      const deadline = Date.now() + 5_000;
      while (exeOf(kids[0]) === sh && !script.startsWith('(') && Date.now() < deadline) await new Promise((r) => setImmediate(r));
      if (!script.startsWith('(')) expect(fs.readlinkSync(`/proc/${kids[0]}/fd/0`)).toBe(fs.readlinkSync(`/proc/${child.pid}/fd/0`));
      const found = foreignHolders([child.pid as number, ...kids], ends, { expected, leader: child.pid as number }).map((h) => h.pid);
      child.kill('SIGKILL');
      for (const k of kids) {
        try {
          process.kill(k, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      expect(kids, script).toHaveLength(1);
      return found.filter((p) => kids.includes(p));
    };
    expect(await run('cat; :')).toHaveLength(1); // cat: another program, holding stdin and stdout
    expect(await run('(read x; echo ready; read y); :')).toHaveLength(0); // a subshell: a fork of sh itself
    // Another program holding stdin only (a background job's stdin is /dev/null unless redirected: fd 3 keeps it).
    expect(await run('exec 3<&0; cat <&3 >/dev/null & echo ready; wait')).toHaveLength(0);
  });
});
