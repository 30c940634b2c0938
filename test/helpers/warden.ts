import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// The MCP SDK is imported where a client is made (connectWarden), not here: ~0.2 CPU-s of every test file's
// start-up, and most files that import these helpers never make one.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach } from 'vitest';
import { warmUnlessCached, warmedByAdd } from './warm-digest.js';

// Drives the built CLI as a user or an MCP client would: real processes, nothing mocked.

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const WARDEN = path.join(ROOT, 'dist/cli/main.js');
export const SERVERS = path.join(ROOT, 'test/servers');
/**
 * The node that runs the tests, found the way the product finds its own (process.execPath; on Linux node reads it
 * from /proc/self/exe, so it is the real file): /usr/bin/node on a Debian box, /usr/local/bin/node in the official
 * container image, somewhere under ~/.nvm or ~/.volta on a laptop.
 */
export const NODE = process.execPath;
/**
 * A trusted PATH ("path" of servers.json) for tests that launch a bare `node` or a `#!/usr/bin/env node` script:
 * the directory of NODE first, then the default one, so that `node` resolves to NODE wherever it is installed.
 */
export const TRUSTED_PATH = [...new Set([path.dirname(NODE), '/usr/local/bin', '/usr/bin', '/bin'])].join(':');
/** `text` as a regular expression source that matches it literally (for paths inside patterns). */
export const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
export const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const MEMORY = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');

/** A fresh temporary directory (mode 0700), removed by the returned function. */
export function tempDir(prefix = 'warden-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** For each test of the file: a fresh temporary `dir` and a warden `home` at dir/home (made by the first
 *  command that uses it), removed after the test. Call at the top level of a test file. */
export function perTestDirs(): { readonly dir: string; readonly home: string } {
  const dirs = { dir: '', home: '' };
  beforeEach(() => {
    dirs.dir = tempDir();
    dirs.home = path.join(dirs.dir, 'home');
  });
  afterEach(() => fs.rmSync(dirs.dir, { recursive: true, force: true }));
  return dirs;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `mcp-warden --home HOME ...args` to completion. */
export function cli(home: string, args: string[], options: { env?: NodeJS.ProcessEnv; input?: string } = {}): CliResult {
  const r = spawnSync(process.execPath, [WARDEN, '--home', home, ...args], {
    env: options.env ?? process.env,
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Adds a server non-interactively and asserts it worked. A command line that starts with the node running the
 *  tests (or one of test/nodes) starts from that node's digest, made once per run (test/helpers/warm-digest.ts). */
export function addServer(home: string, id: string, commandLine: string[], flags: string[] = []): CliResult {
  if (warmedByAdd(commandLine[0])) warmUnlessCached(home, id, commandLine[0] as string);
  const r = cli(home, ['add', id, '--yes', ...flags, '--', ...commandLine]);
  if (r.code !== 0) throw new Error(`add ${id} failed (${r.code}): ${r.stderr}${r.stdout}`);
  return r;
}

/** Connects the MCP SDK client to `mcp-warden run ID`; `setup` may register request handlers first. */
export async function connectClient(home: string, id: string, env?: Record<string, string>, capabilities?: Record<string, unknown>, setup?: (client: Client) => void): Promise<{ client: Client; stderr: () => string }> {
  return connectWarden([process.execPath, WARDEN], home, id, env, capabilities, setup);
}

/** connectClient with the warden started as `warden` (its command and first arguments), e.g. an installed one. */
export async function connectWarden(warden: string[], home: string, id: string, env?: Record<string, string>, capabilities?: Record<string, unknown>, setup?: (client: Client) => void): Promise<{ client: Client; stderr: () => string }> {
  const [command, ...first] = warden as [string, ...string[]];
  const [{ Client }, { StdioClientTransport }, { ListRootsRequestSchema }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const transport = new StdioClientTransport({
    command,
    args: [...first, '--home', home, 'run', id],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'warden-test', version: '1.0.0' }, capabilities ? { capabilities } : undefined);
  if (capabilities?.roots) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [] }));
  setup?.(client);
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

export const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** A raw line-level client of `mcp-warden run`, for byte-exact assertions. */
export class RawSession {
  readonly proc: ChildProcessWithoutNullStreams;
  readonly out: Buffer[] = [];
  stdoutBytes = Buffer.alloc(0);
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: (() => void)[] = [];

  /** `wrap`: a command the warden is started under (`[...wrap, node, warden, …]`), e.g. to change its namespaces. */
  constructor(home: string, id: string, env: NodeJS.ProcessEnv = process.env, wrap: string[] = []) {
    const argv: string[] = [...wrap, process.execPath, WARDEN, '--home', home, 'run', id];
    const [cmd, ...args] = argv as [string, ...string[]];
    this.proc = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdin.on('error', () => {});
    this.proc.stdout.on('data', (d: Buffer) => {
      this.stdoutBytes = Buffer.concat([this.stdoutBytes, d]);
      this.notify();
    });
    this.proc.stderr.on('data', (d: Buffer) => {
      this.stderr += d.toString();
      this.notify();
    });
    this.exited = new Promise((resolve) => this.proc.once('exit', (code, signal) => (this.notify(), resolve({ code, signal }))));
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  send(line: string | Buffer): void {
    this.proc.stdin.write(line);
  }

  /** Complete lines received so far (newline included). */
  lines(): Buffer[] {
    const out: Buffer[] = [];
    let start = 0;
    for (;;) {
      const nl = this.stdoutBytes.indexOf(0x0a, start);
      if (nl < 0) return out;
      out.push(this.stdoutBytes.subarray(start, nl + 1));
      start = nl + 1;
    }
  }

  /** Waits until `pred` holds, checking on every output event; fails after `ms`. */
  async until(pred: () => boolean, what: string, ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pred()) {
      if (this.proc.exitCode !== null && !pred()) {
        // One last look: output may have arrived with the exit.
        if (pred()) return;
        throw new Error(`warden exited (${this.proc.exitCode}) before: ${what}\nstderr: ${this.stderr}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for: ${what}\nstderr: ${this.stderr}\nstdout: ${this.stdoutBytes.toString()}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => (clearTimeout(t), resolve()));
      });
    }
  }

  /** Waits for the n-th (1-based) complete stdout line and parses it. */
  async message(n: number): Promise<Record<string, unknown>> {
    await this.until(() => this.lines().length >= n, `stdout line ${n}`);
    return JSON.parse((this.lines()[n - 1] as Buffer).toString()) as Record<string, unknown>;
  }

  close(): void {
    this.proc.stdin.end();
  }
}

/** Runs `mcp-warden run ID`, expects its initialize to be answered with a result, closes it and expects exit 0. */
export async function launchAndClose(home: string, id: string): Promise<void> {
  const s = new RawSession(home, id);
  s.send(INITIALIZE + '\n');
  const answer = await s.message(1);
  if (!('result' in answer)) throw new Error(`initialize of '${id}' was not answered with a result: ${JSON.stringify(answer)}\nstderr: ${s.stderr}`);
  s.close();
  const { code } = await s.exited;
  if (code !== 0) throw new Error(`run ${id} exited ${code}\nstderr: ${s.stderr}`);
}

/** Runs `mcp-warden run ID`, sends initialize, and returns the error it was answered with and the exit code. */
export async function refusedInitialize(home: string, id: string, env?: NodeJS.ProcessEnv): Promise<{ error: { message: string; data: { code: string } }; code: number | null; session: RawSession }> {
  const s = new RawSession(home, id, env);
  s.send(INITIALIZE + '\n');
  const answer = await s.message(1);
  const { code } = await s.exited;
  return { error: answer.error as { message: string; data: { code: string } }, code, session: s };
}

/** Audit events of a home, parsed. */
export function auditEvents(home: string): Record<string, unknown>[] {
  const file = path.join(home, 'audit.log');
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** How many `launch` events (of `server`, when given) the home's audit log holds: taken before a session starts,
 *  it is the `after` of that session's launch (sessionLaunch). */
export function launchCount(home: string, server?: string): number {
  return auditEvents(home).filter((e) => e.event === 'launch' && (server === undefined || e.server === server)).length;
}

/**
 * The launch event of one session: the first `launch` audit event (of `server`, with `decision`, when given) after
 * the first `after` of them (launchCount before the session), or the one of the session whose pid (its run record's
 * name, run/PID.json) is `pid`. `run` queues its audit writes, so the event may land after the client was answered:
 * this re-reads the log at each change of the home until it is there, and fails after `ms`. Never an earlier
 * session's event, as the log's last launch may be.
 */
export async function sessionLaunch(home: string, which: { after?: number; pid?: number; server?: string; decision?: 'allow' | 'refuse' }, ms = 20_000): Promise<Record<string, unknown>> {
  let unread = '';
  const find = (): Record<string, unknown> | undefined => {
    let events: Record<string, unknown>[];
    try {
      events = auditEvents(home);
    } catch (err) {
      unread = ` (last read: ${String(err)})`; // a line read while it was being appended: read again at the next change
      return undefined;
    }
    const launches = events.filter((e) => e.event === 'launch' && (which.server === undefined || e.server === which.server));
    return launches.slice(which.after ?? 0).find((e) => (which.pid === undefined || e.pid === which.pid) && (which.decision === undefined || e.decision === which.decision));
  };
  const found = find();
  if (found) return found;
  const deadline = Date.now() + ms;
  // The home exists once a session runs; its entries change when the log is appended to (inotify on the directory).
  const watcher = fs.watch(home);
  try {
    let changed: () => void = () => {};
    watcher.on('change', () => changed());
    for (;;) {
      const event = find(); // after the watch was set: a write between the first look and the watch is not missed
      if (event) return event;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no launch event ${JSON.stringify(which)} in ${home}/audit.log after ${ms} ms${unread}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        changed = () => (clearTimeout(t), resolve());
      });
    }
  } finally {
    watcher.close();
  }
}

/** True while the process exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}
