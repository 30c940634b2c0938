import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requireHost } from '../helpers/host.js';
import { addServer, alive, auditEvents, cli, connectClient, INITIALIZE, launchCount, NODE, RawSession, refusedInitialize, SERVERS, sessionLaunch, tempDir, TRUSTED_PATH } from '../helpers/warden.js';

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

describe('resolution through the trusted PATH', () => {
  it('ignores a shim earlier in the inherited PATH', async () => {
    const marker = path.join(dir, 'marker');
    shim(path.join(dir, 'evil/node'), marker);
    writeServersJson(TRUSTED_PATH);
    const fixtures = copyFixtures(path.join(dir, 'servers'));
    addServer(home, 'basic', ['node', path.join(fixtures, 'basic.mjs')]);
    const after = launchCount(home);
    const s = new RawSession(home, 'basic', { ...process.env, PATH: `${dir}/evil:${process.env.PATH}` });
    s.send(INITIALIZE + '\n');
    expect((await s.message(1)).result).toBeDefined();
    s.close();
    expect((await s.exited).code).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
    expect((await sessionLaunch(home, { after })).resolvedPath).toBe(NODE);
  });

  it('refuses a shim that appears earlier in the trusted PATH after enrollment', async () => {
    const marker = path.join(dir, 'marker');
    writeServersJson(`${dir}/local/bin:${TRUSTED_PATH}`);
    const fixtures = copyFixtures(path.join(dir, 'servers'));
    addServer(home, 'basic', ['node', path.join(fixtures, 'basic.mjs')]);
    shim(path.join(dir, 'local/bin/node'), marker);
    const r = await refusedInitialize(home, 'basic');
    expect(r.code).toBe(3);
    expect(r.error.data.code).toBe('NOT_ALLOWLISTED');
    expect(r.error.message).toBe("mcp-warden refused to launch server 'basic' (NOT_ALLOWLISTED): a file it would run is not in the allowlist. The warden's stderr says what it found. Run 'mcp-warden status basic' for details.");
    expect(r.session.stderr).toMatch(/mcp-warden refused to launch server 'basic': .* is not in the allowlist.*Run 'mcp-warden status basic'/);
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
    const after = launchCount(home);
    const s = new RawSession(home, 'script', { ...process.env, PATH: `${dir}/evil:${process.env.PATH}` });
    s.send(INITIALIZE + '\n');
    expect((await s.message(1)).result).toBeDefined();
    s.close();
    await s.exited;
    expect(fs.existsSync(marker)).toBe(false);
    const launch = await sessionLaunch(home, { after });
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
    const changed = await refusedInitialize(home, 'linked');
    expect(changed.code).toBe(3);
    expect(changed.error.data.code).toBe('NOT_ALLOWLISTED');
    expect(changed.session.stderr).toContain(path.join(b, 'basic.mjs'));

    const c = copyFixtures(path.join(dir, 'c'));
    fs.rmSync(link);
    fs.symlinkSync(path.join(c, 'basic.mjs'), link);
    const moved = await refusedInitialize(home, 'linked');
    expect(moved.error.data.code).toBe('DIGEST_AT_OTHER_PATH');
    expect(moved.session.stderr).toContain(`has the digest allowlisted for ${path.join(a, 'basic.mjs')}`);
  });

  it('refuses a package tree in which one dependency file changed', async () => {
    const fixtures = copyFixtures(path.join(dir, 'servers'));
    addServer(home, 'basic', [NODE, path.join(fixtures, 'basic.mjs')]);
    fs.appendFileSync(path.join(fixtures, 'lib/rpc.mjs'), '\n// one more line\n');
    const r = await refusedInitialize(home, 'basic');
    expect(r.error.data.code).toBe('DIGEST_MISMATCH');
    expect(r.session.stderr).toMatch(new RegExp(`package ${fixtures} changed: expected sha256 [0-9a-f]{64}, got [0-9a-f]{64}`));
  });

  it('refuses a registry launcher at run time with the way to pin it', async () => {
    fs.mkdirSync(home, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify({ version: 1, servers: { fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] } } }), { mode: 0o600 });
    const r = await refusedInitialize(home, 'fs');
    expect(r.code).toBe(3);
    expect(r.error.data.code).toBe('REGISTRY_LAUNCHER');
    expect(r.error.message).toContain('Install a pinned copy');
  });

  it('tells an SDK client why the launch was refused', async () => {
    fs.mkdirSync(home, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify({ version: 1, servers: { basic: { command: NODE, args: [path.join(SERVERS, 'basic.mjs')] } } }), { mode: 0o600 });
    await expect(connectClient(home, 'basic')).rejects.toThrow("mcp-warden refused to launch server 'basic' (NOT_ALLOWLISTED): a file it would run is not in the allowlist. The warden's stderr says what it found.");
  });
});

describe('the inode actually executed', () => {
  // Nothing in the warden holds the window between digest and exec open: test/helpers/swap-on-digest.py watches
  // the file with inotify and swaps it the moment the warden closes it after digesting, racing the launch on its
  // own. A race proves nothing by one run, so each test makes up to ATTEMPTS launches and asserts that (a) every
  // one was refused before a byte of the substitute reached the client, or ran the reviewed content, and (b) at
  // least one swap landed between digest and exec and was refused there (else the test would be vacuous). Each
  // attempt starts from a fresh copy of the reviewed file and an empty digest cache: a cache hit skips the read
  // the helper waits for.
  const ATTEMPTS = 6;
  const IMPOSTOR = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'alert', data: 'impostor wrote first' } });
  const SWAPPER = path.join(import.meta.dirname, '../helpers/swap-on-digest.py');
  const RELAY_REFUSALS = ['EXEC_MISMATCH', 'EXEC_HANDED_OFF', 'ARTIFACT_CHANGED', 'DIGEST_MISMATCH', 'NOT_ALLOWLISTED', 'LAUNCH_FAILED'];

  interface Swap {
    swapped: boolean;
    error?: string;
    timeout?: boolean;
  }

  /** Starts the helper on `file`; resolves once its watch is in place. `outcome` resolves with its report. */
  async function swapper(file: string, opens: number, action: string[]): Promise<{ outcome: Promise<Swap>; stop: () => void }> {
    requireHost('python3');
    const p = spawn('python3', [SWAPPER, file, String(opens), ...action], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<void>((resolve) => p.once('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      p.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('"ready"')) resolve();
      });
      p.once('exit', (code) => reject(new Error(`swap-on-digest.py exited (${code}) before it was ready: ${err}`)));
    });
    // Stopped before it reported (the file was never read as expected): no swap.
    const outcome = exited.then(() => {
      const last = JSON.parse(out.trim().split('\n').pop() as string) as Partial<Swap>;
      return last.swapped === undefined ? { swapped: false, timeout: true } : (last as Swap);
    });
    return { outcome, stop: () => p.kill() };
  }

  interface Attempt {
    swap: Swap;
    /** The launch events of the home before this attempt's session (its launch: sessionLaunch after them). */
    launchesBefore: number;
    answer: Record<string, unknown>;
    /** A launch refusal carries data.code; a session the warden closed after launch, data.cause. */
    error?: { message: string; data: { code?: string; cause?: string } };
    code: number | null;
    stdout: string;
    stderr: string;
  }

  /** One launch of `id` while the helper swaps `watched` after its `opens`-th read; `fresh` restores the reviewed file first. */
  async function attempt(id: string, watched: string, opens: number, action: string[], fresh: () => void): Promise<Attempt> {
    fresh();
    fs.rmSync(path.join(home, 'cache'), { recursive: true, force: true });
    const helper = await swapper(watched, opens, action);
    const launchesBefore = launchCount(home);
    const s = new RawSession(home, id);
    try {
      s.send(INITIALIZE + '\n');
      const answer = await s.message(1);
      s.close(); // a refused session has ended already; one let through ends at EOF, having relayed what it had
      const { code } = await s.exited;
      helper.stop(); // it has exited already if it swapped
      const swap = await helper.outcome;
      const error = answer.error as Attempt['error'];
      return { swap, launchesBefore, answer, ...(error ? { error } : {}), code, stdout: s.stdoutBytes.toString(), stderr: s.stderr };
    } finally {
      helper.stop();
      s.proc.kill('SIGKILL');
    }
  }

  /** Copies the reviewed file to a new inode at `at` (the digest cache cannot know it). */
  function restore(from: string, at: string): void {
    fs.copyFileSync(from, `${at}.restore`);
    fs.chmodSync(`${at}.restore`, fs.statSync(from).mode & 0o777);
    fs.renameSync(`${at}.restore`, at);
  }

  /** Runs attempts until `landed` says one was refused inside the window; asserts `safe` of every one. */
  async function race(run: (i: number) => Promise<Attempt>, safe: (a: Attempt) => void, landed: (a: Attempt) => boolean): Promise<Attempt> {
    const seen: string[] = [];
    for (let i = 0; i < ATTEMPTS; i++) {
      const a = await run(i);
      safe(a);
      seen.push(`${JSON.stringify(a.swap)} -> ${a.error ? `${a.error.data.code ?? a.error.data.cause}: ${a.stderr}` : 'served'}`);
      if (landed(a)) return a;
    }
    throw new Error(`no swap landed between digest and exec in ${ATTEMPTS} attempts (the test proved nothing):\n${seen.join('\n')}`);
  }

  /** The ELF server: a private copy of node, enrolled; the helper swaps it after the warden's second open (the
   *  first reads its head for the ELF magic, the second digests it). */
  function enrollElf(): string {
    const binary = path.join(dir, 'bin/node');
    fs.mkdirSync(path.dirname(binary));
    restore(process.execPath, binary);
    addServer(home, 'elf', [binary, path.join(SERVERS, 'basic.mjs')]);
    return binary;
  }

  /** Holds for every attempt: nothing the substitute wrote reached the client; a refusal is all the client got. */
  function nothingRelayed(a: Attempt): void {
    expect(a.stdout).not.toContain('impostor');
    if (a.error) {
      expect(a.code, `run answered ${JSON.stringify(a.error)} and exited ${a.code}; its stderr:\n${a.stderr}`).toBe(3);
      if (a.error.data.code !== undefined) expect(RELAY_REFUSALS).toContain(a.error.data.code);
      else expect(['protocol_error', 'verification_failed']).toContain(a.error.data.cause);
      expect(a.stdout.split('\n').filter(Boolean)).toHaveLength(1);
    } else {
      expect((a.answer.result as { serverInfo: { name: string } }).serverInfo.name).not.toBe('impostor');
    }
  }

  it('kills the server when the binary was replaced between digest and exec, before a byte of it is relayed', async () => {
    const binary = enrollElf();
    const marker = path.join(dir, 'impostor-ran');
    // A substitute that writes a valid JSON-RPC message the moment it starts, then serves the reviewed server
    // through the real node: let through, it would pass the handshake and its first line would reach the client.
    // (A non-JSON line would prove nothing: the relay never forwards those.) It leaves a marker when it runs.
    const substitute = path.join(dir, 'substitute');
    const r = await race(
      () =>
        attempt('elf', binary, 2, ['rename', substitute], () => {
          restore(process.execPath, binary);
          fs.rmSync(marker, { force: true });
          fs.writeFileSync(substitute, `#!/bin/sh\n: > ${marker}\nprintf '%s\\n' '${IMPOSTOR}'\nexec ${process.execPath} "$@"\n`, { mode: 0o755 });
        }),
      (a) => {
        nothingRelayed(a);
        // The substitute never runs undetected: if it ran, the launch was refused.
        if (fs.existsSync(marker)) expect(a.error?.data.code).toBe('EXEC_MISMATCH');
      },
      // Landed: the kernel executed another inode than the one digested.
      (a) => a.swap.swapped && a.error?.data.code === 'EXEC_MISMATCH' && a.stderr.includes('the file was replaced between digest and exec'),
    );
    expect(r.code).toBe(3);
    const launch = await sessionLaunch(home, { after: r.launchesBefore, decision: 'refuse' });
    expect(launch).toMatchObject({ decision: 'refuse', code: 'EXEC_MISMATCH' });
    expect(alive(launch?.pid as number)).toBe(false);
  });

  it('closes the session when a package file was swapped between digest and load, before relaying a byte', async () => {
    const fixtures = copyFixtures(path.join(dir, 'servers'));
    addServer(home, 'swapped', [process.execPath, path.join(fixtures, 'basic.mjs')]);
    const rpc = path.join(fixtures, 'lib/rpc.mjs');
    const original = path.join(dir, 'rpc.mjs.reviewed');
    fs.copyFileSync(rpc, original);
    const impostor = path.join(dir, 'rpc.mjs.impostor');
    // The helper swaps it after its first read: the package tree's digest (the warden reads the head of the
    // executable and the script only).
    const r = await race(
      () =>
        attempt('swapped', rpc, 1, ['rename', impostor], () => {
          restore(original, rpc);
          fs.writeFileSync(impostor, fs.readFileSync(original, 'utf8').replace("name, version: '1.0.0'", "name: 'impostor', version: '6.6.6'"));
        }),
      nothingRelayed,
      // Landed: the swap came after the digest and before node loaded the file, and the module guard refused it.
      (a) => a.swap.swapped && /ended by the warden's module guard/.test(a.error?.message ?? ''),
    );
    expect(r.code).toBe(3);
    expect(r.answer.result).toBeUndefined();
    // The module guard refuses the changed file before the server runs it (ADR 0014); without a guard (not a node
    // server) the re-stat at the first line closes the session instead.
    expect(r.stderr).toContain(`${rpc}, which changed after the warden digested it`);
    expect(auditEvents(home).filter((e) => e.event === 'exit').pop()).toMatchObject({ cause: 'server_exit', groupGone: true });
  });

  it('kills the server when the binary was modified in place between digest and exec', async () => {
    const binary = enrollElf();
    await race(
      () => attempt('elf', binary, 2, ['append'], () => restore(process.execPath, binary)),
      (a) => {
        nothingRelayed(a);
        // An append that succeeded came before exec (a running ELF cannot be written: ETXTBSY): it must be refused.
        if (a.swap.swapped) expect(a.error?.data.code).toMatch(/^(EXEC_MISMATCH|LAUNCH_FAILED)$/);
      },
      (a) => a.swap.swapped && a.error?.data.code === 'EXEC_MISMATCH' && a.stderr.includes('was modified between digest and exec'),
    );
  });
});
