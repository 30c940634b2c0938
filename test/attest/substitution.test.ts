import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, TRUSTED_PATH, addServer, alive, auditEvents, cli, connectClient, escapeRegExp, tempDir } from '../helpers/warden.js';

// The substitutions a supply-chain attacker (or a careless installer) makes between review and launch. Each
// must be refused before a byte of the substitute reaches the client.

let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A private copy of the fixture servers (with their package.json), so tests can change it. */
function copyFixtures(to: string): string {
  fs.cpSync(SERVERS, to, { recursive: true });
  return to;
}

function writeServersJson(trustedPath: string): void {
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify({ version: 1, path: trustedPath, servers: {} }), { mode: 0o600 });
}

function shim(at: string, marker: string): void {
  fs.mkdirSync(path.dirname(at), { recursive: true });
  fs.writeFileSync(at, `#!/bin/sh\necho shim-ran > ${marker}\nexec ${NODE} "$@"\n`, { mode: 0o755 });
}

async function refusedInitialize(id: string, env?: NodeJS.ProcessEnv): Promise<{ error: { message: string; data: { code: string } }; code: number | null; session: RawSession }> {
  const s = new RawSession(home, id, env);
  s.send(INITIALIZE + '\n');
  const answer = await s.message(1);
  const { code } = await s.exited;
  return { error: answer.error as { message: string; data: { code: string } }, code, session: s };
}

describe('resolution through the trusted PATH', () => {
  it('ignores a shim earlier in the inherited PATH', async () => {
    const marker = path.join(dir, 'marker');
    shim(path.join(dir, 'evil/node'), marker);
    writeServersJson(TRUSTED_PATH);
    const fixtures = copyFixtures(path.join(dir, 'servers'));
    addServer(home, 'basic', ['node', path.join(fixtures, 'basic.mjs')]);
    const s = new RawSession(home, 'basic', { ...process.env, PATH: `${dir}/evil:${process.env.PATH}` });
    s.send(INITIALIZE + '\n');
    expect((await s.message(1)).result).toBeDefined();
    s.close();
    expect((await s.exited).code).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
    expect(auditEvents(home).find((e) => e.event === 'launch')?.resolvedPath).toBe(NODE);
  });

  it('refuses a shim that appears earlier in the trusted PATH after enrollment', async () => {
    const marker = path.join(dir, 'marker');
    writeServersJson(`${dir}/local/bin:${TRUSTED_PATH}`);
    const fixtures = copyFixtures(path.join(dir, 'servers'));
    addServer(home, 'basic', ['node', path.join(fixtures, 'basic.mjs')]);
    shim(path.join(dir, 'local/bin/node'), marker);
    const r = await refusedInitialize('basic');
    expect(r.code).toBe(3);
    expect(r.error.data.code).toBe('NOT_ALLOWLISTED');
    expect(r.error.message).toMatch(/mcp-warden refused to launch server 'basic': .* is not in the allowlist.*Run 'mcp-warden status basic'/);
    expect(fs.existsSync(marker)).toBe(false);
    const status = cli(home, ['status', 'basic', '--json']);
    expect(status.code).toBe(1);
    const paths = (JSON.parse(status.stdout) as { servers: { artifacts: { path: string; state: string }[] }[] }).servers[0]?.artifacts.map((a) => [a.path, a.state]);
    expect(paths).toContainEqual([path.join(dir, 'local/bin/node'), 'not_allowlisted']);
  });

  it('launches a #!/usr/bin/env node script with the trusted node, not a shadowing one', async () => {
    const marker = path.join(dir, 'marker');
    shim(path.join(dir, 'evil/node'), marker);
    const fixtures = copyFixtures(path.join(dir, 'servers'));
    const script = path.join(fixtures, 'basic.mjs');
    fs.writeFileSync(script, '#!/usr/bin/env node\n' + fs.readFileSync(script, 'utf8'));
    fs.chmodSync(script, 0o755);
    writeServersJson(TRUSTED_PATH);
    addServer(home, 'script', [script]);
    const s = new RawSession(home, 'script', { ...process.env, PATH: `${dir}/evil:${process.env.PATH}` });
    s.send(INITIALIZE + '\n');
    expect((await s.message(1)).result).toBeDefined();
    s.close();
    await s.exited;
    expect(fs.existsSync(marker)).toBe(false);
    const launch = auditEvents(home).find((e) => e.event === 'launch');
    expect(launch?.resolvedPath).toBe(NODE);
    expect((launch?.artifacts as { kind: string }[]).map((a) => a.kind)).toEqual(['executable', 'script', 'package']);
  });
});

describe('substitution after enrollment', () => {
  it('refuses a symlink re-pointed to another script, and a copy of the reviewed script at another path', async () => {
    const a = copyFixtures(path.join(dir, 'a'));
    const b = copyFixtures(path.join(dir, 'b'));
    fs.appendFileSync(path.join(b, 'basic.mjs'), '\n// changed\n');
    const link = path.join(dir, 'bin/server.mjs');
    fs.mkdirSync(path.dirname(link));
    fs.symlinkSync(path.join(a, 'basic.mjs'), link);
    addServer(home, 'linked', [NODE, link]);
    const enrolled = cli(home, ['status', 'linked']);
    expect(enrolled.stdout).toContain(`via ${link} -> ${path.join(a, 'basic.mjs')}`);

    fs.rmSync(link);
    fs.symlinkSync(path.join(b, 'basic.mjs'), link);
    const changed = await refusedInitialize('linked');
    expect(changed.code).toBe(3);
    expect(changed.error.data.code).toBe('NOT_ALLOWLISTED');
    expect(changed.error.message).toContain(path.join(b, 'basic.mjs'));

    const c = copyFixtures(path.join(dir, 'c'));
    fs.rmSync(link);
    fs.symlinkSync(path.join(c, 'basic.mjs'), link);
    const moved = await refusedInitialize('linked');
    expect(moved.error.data.code).toBe('DIGEST_AT_OTHER_PATH');
    expect(moved.error.message).toContain(`has the digest allowlisted for ${path.join(a, 'basic.mjs')}`);
  });

  it('refuses a package tree in which one dependency file changed', async () => {
    const fixtures = copyFixtures(path.join(dir, 'servers'));
    addServer(home, 'basic', [NODE, path.join(fixtures, 'basic.mjs')]);
    fs.appendFileSync(path.join(fixtures, 'lib/rpc.mjs'), '\n// one more line\n');
    const r = await refusedInitialize('basic');
    expect(r.error.data.code).toBe('DIGEST_MISMATCH');
    expect(r.error.message).toMatch(new RegExp(`package ${fixtures} changed: expected sha256 [0-9a-f]{64}, got [0-9a-f]{64}`));
  });

  it('refuses a registry launcher at run time with the way to pin it', async () => {
    fs.mkdirSync(home, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify({ version: 1, servers: { fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] } } }), { mode: 0o600 });
    const r = await refusedInitialize('fs');
    expect(r.code).toBe(3);
    expect(r.error.data.code).toBe('REGISTRY_LAUNCHER');
    expect(r.error.message).toContain('Install a pinned copy');
  });

  it('tells an SDK client why the launch was refused', async () => {
    fs.mkdirSync(home, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify({ version: 1, servers: { basic: { command: NODE, args: [path.join(SERVERS, 'basic.mjs')] } } }), { mode: 0o600 });
    await expect(connectClient(home, 'basic')).rejects.toThrow(new RegExp(`mcp-warden refused to launch server 'basic': executable ${escapeRegExp(NODE)} .* is not in the allowlist`));
  });
});

describe('the inode actually executed', () => {
  const IMPOSTOR = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'alert', data: 'impostor wrote first' } });

  // The warden holds between digest and exec on a FIFO (a test seam), so the swap lands exactly there.
  async function swapBeforeExec(swap: (binary: string) => void): Promise<{ error: { message: string; data: { code: string } }; code: number | null; stdout: string }> {
    const binary = path.join(dir, 'bin/node');
    fs.mkdirSync(path.dirname(binary));
    fs.copyFileSync(NODE, binary);
    fs.chmodSync(binary, 0o755);
    addServer(home, 'elf', [binary, path.join(SERVERS, 'basic.mjs')]);
    const fifo = path.join(dir, 'hold');
    execFileSync('mkfifo', [fifo]);
    const s = new RawSession(home, 'elf', { ...process.env, MCP_WARDEN_TEST_HOLD_BEFORE_SPAWN: fifo });
    s.send(INITIALIZE + '\n');
    const writer = fs.openSync(fifo, 'w'); // returns once the warden is waiting at the hold
    swap(binary);
    fs.writeSync(writer, 'go');
    fs.closeSync(writer);
    const answer = await s.message(1);
    s.close(); // a refused session has ended already; one let through ends at EOF, having relayed what it had
    const { code } = await s.exited;
    return { error: answer.error as { message: string; data: { code: string } }, code, stdout: s.stdoutBytes.toString() };
  }

  it('kills the server when the binary was replaced between digest and exec, before a byte of it is relayed', async () => {
    const r = await swapBeforeExec((binary) => {
      const other = `${binary}.new`;
      // A substitute that writes a valid JSON-RPC message the moment it starts, then serves the reviewed server
      // through the real node: let through, it would pass the handshake and its first line would reach the client.
      // (A non-JSON line would prove nothing: the relay never forwards those.)
      fs.writeFileSync(other, `#!/bin/sh\nprintf '%s\\n' '${IMPOSTOR}'\nexec ${process.execPath} "$@"\n`, { mode: 0o755 });
      fs.renameSync(other, binary);
    });
    // The refusal of the client's initialize is all the client got.
    expect(r.stdout).not.toContain('impostor');
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(1);
    expect(r.code).toBe(3);
    expect(r.error.data.code).toBe('EXEC_MISMATCH');
    expect(r.error.message).toContain('the file was replaced between digest and exec');
    const launch = auditEvents(home).filter((e) => e.event === 'launch').pop();
    expect(launch).toMatchObject({ decision: 'refuse', code: 'EXEC_MISMATCH' });
    expect(alive(launch?.pid as number)).toBe(false);
  });

  it('closes the session when a package file was swapped between digest and load, before relaying a byte', async () => {
    const fixtures = copyFixtures(path.join(dir, 'servers'));
    addServer(home, 'swapped', [NODE, path.join(fixtures, 'basic.mjs')]);
    const fifo = path.join(dir, 'hold');
    execFileSync('mkfifo', [fifo]);
    const s = new RawSession(home, 'swapped', { ...process.env, MCP_WARDEN_TEST_HOLD_BEFORE_SPAWN: fifo });
    s.send(INITIALIZE + '\n');
    const writer = fs.openSync(fifo, 'w');
    const rpc = path.join(fixtures, 'lib/rpc.mjs');
    const original = fs.readFileSync(rpc);
    fs.writeFileSync(rpc, original.toString().replace("name, version: '1.0.0'", "name: 'impostor', version: '6.6.6'"));
    fs.writeSync(writer, 'go');
    fs.closeSync(writer);
    const answer = await s.message(1);
    expect((await s.exited).code).toBe(3);
    expect(answer.result).toBeUndefined();
    // The module guard refuses the changed file before the server runs it (ADR 0014); without a guard (not a node
    // server) the re-stat at the first line closes the session instead.
    expect((answer.error as { message: string }).message).toMatch(/ended by the warden's module guard/);
    expect(s.stderr).toContain(`${rpc}, which changed after the warden digested it`);
    expect(s.stdoutBytes.toString()).not.toContain('impostor');
    expect(auditEvents(home).filter((e) => e.event === 'exit').pop()).toMatchObject({ cause: 'server_exit', groupGone: true });
  });

  it('kills the server when the binary was modified in place between digest and exec', async () => {
    const r = await swapBeforeExec((binary) => fs.appendFileSync(binary, Buffer.from([0])));
    expect(r.error.data.code).toBe('EXEC_MISMATCH');
    expect(r.error.message).toContain('was modified between digest and exec');
  });
});

