import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { WardenError } from '../error.js';
import { escaped } from '../escape.js';
import { trustedProgram, type TrustedLookup } from '../sandbox/engine.js';
import type { Sandbox } from '../sandbox/schema.js';
import { writableChainAt } from '../store/perms.js';
import { FILES, fetchFailed, sourceInsecure, tooLarge, type FetchContext, type Fetched } from './fetch-common.js';

// A git source, through the `git` program found in servers.json's trusted PATH (never the PATH the daemon
// inherited). Each fetch starts from an empty bare repository in the caller's private scratch directory (no
// templates, so no hooks; no work tree, so no checkout, no filters, no LFS smudge), fetches one commit (depth 1,
// no tags, no submodules) and reads the two files as blobs with cat-file, sizes checked first. Every invocation
// carries configuration that no hostile repository can undo, since git never fetches configuration: hooks off,
// only the source's own transport allowed (never ext:: or fd::), objects fsck'ed, no automatic gc or
// maintenance (which would outlive the process group). git runs in its own session, without a terminal
// (GIT_TERMINAL_PROMPT=0, no askpass programs), so nothing can prompt; the whole group is killed at the deadline.
// No credential is given by the warden: git uses what the operator configured for the daemon's user (a credential
// helper, ssh keys), or the source must be public (docs/adr/0025-fleet-source.md).

type GitSource = { remote: string; path: string; ref: string };

const STDERR_KEEP = 4096;
/** GIT_* variables of the daemon's environment that are kept: how git reaches hosts, chosen by the operator. All
 *  others (GIT_DIR, GIT_CONFIG_*, GIT_ASKPASS, GIT_SSL_NO_VERIFY...) would redirect or weaken these invocations. */
const KEPT_GIT_VARIABLES = new Set(['GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_SSH_VARIANT', 'GIT_PROXY_COMMAND', 'GIT_SSL_CAINFO', 'GIT_SSL_CAPATH']);

/** git on the trusted PATH, looked up as the warden looks its sandbox engine up (sandbox/engine.ts): past a
 *  directory a server's write grant reaches and past a link whose target one reaches, root- or daemon-owned and
 *  writable by nobody else; the realpath is what runs. A confined server writes as the daemon's user. */
export function findGit(trustedPath: string, sandboxes: Record<string, Sandbox | undefined>): TrustedLookup {
  return trustedProgram('git', { path: trustedPath, sandboxes });
}

function transportOf(remote: string): string {
  if (path.isAbsolute(remote) || remote.startsWith('file://')) return 'file';
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(remote)?.[1]?.toLowerCase();
  return scheme ?? 'ssh'; // user@host:path
}

function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!(k.startsWith('GIT_') && !KEPT_GIT_VARIABLES.has(k)) && k !== 'SSH_ASKPASS') env[k] = v;
  return { ...env, GIT_TERMINAL_PROMPT: '0', SSH_ASKPASS_REQUIRE: 'never', LC_ALL: 'C' };
}

function hardening(remote: string): string[] {
  const cfg = ['core.hooksPath=/dev/null', 'core.fsmonitor=false', 'protocol.allow=never', `protocol.${transportOf(remote)}.allow=always`, 'transfer.fsckObjects=true', 'fetch.recurseSubmodules=false', 'submodule.recurse=false', 'gc.auto=0', 'maintenance.auto=false'];
  return cfg.flatMap((c) => ['-c', c]);
}

interface Run {
  /** The git command, for messages (init, fetch, cat-file). */
  verb: string;
  args: string[];
  input?: string;
  /** Most bytes of stdout accepted; more kills git. */
  max: number;
  what: string;
}

/** Runs git in its own process group with the caller's signal; resolves its stdout, or refuses. */
function runGit(git: string, where: string, run: Run, ctx: FetchContext): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(git, run.args, { cwd: ctx.scratch, env: gitEnv(), detached: true, stdio: [run.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    let failed: WardenError | undefined;
    const fail = (e: WardenError): void => {
      failed ??= e;
      killGroup();
    };
    const onAbort = (): void => fail(fetchFailed(where, 'aborted'));
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const out: Buffer[] = [];
    let n = 0;
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => {
      n += c.length;
      if (n > run.max) fail(tooLarge(where, run.what, run.max));
      else out.push(c);
    });
    child.stderr?.on('data', (c: Buffer) => {
      if (stderr.length < STDERR_KEEP) stderr += c.toString('utf8').slice(0, STDERR_KEEP - stderr.length);
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(run.input);
    child.on('error', (err) => fail(fetchFailed(where, `git could not be run (${err.message})`)));
    child.on('close', (code, signal) => {
      ctx.signal.removeEventListener('abort', onAbort);
      killGroup(); // anything git started and left behind (a remote helper, ssh)
      if (failed) return reject(failed);
      if (code !== 0) {
        const said = escaped(stderr.trim().split('\n').filter((l) => l.trim() !== '').slice(-2).join(' / ')).slice(0, 500);
        return reject(fetchFailed(where, `git ${run.verb} exited with ${code ?? signal}${said ? `: ${said}` : ''}`));
      }
      resolve(Buffer.concat(out));
    });
  });
}

export async function fetchFromGit(source: GitSource, ctx: FetchContext): Promise<Fetched> {
  const where = `git ${source.remote} ${source.ref}:${source.path}`;
  const found = findGit(ctx.trustedPath, ctx.sandboxes);
  if (found !== undefined && 'untrusted' in found) {
    const why = `another user could make the daemon run their code as git (found first in the trusted PATH ${ctx.trustedPath})`;
    if ((found.mode & 0o022n) !== 0n) throw sourceInsecure(found.untrusted, 'git program', Number(found.mode), why);
    throw new WardenError('BUNDLE_SOURCE_INSECURE', `the git program ${found.untrusted} is owned by uid ${found.uid}, neither root nor the daemon's user, so ${why}; nothing was changed. Reinstall git, or run: chown root ${found.untrusted}`);
  }
  const git = found?.file;
  if (!git) throw fetchFailed(where, `git was not found in the trusted PATH ${ctx.trustedPath} (servers.json "path"); install git there, or publish the bundle at a URL or in a directory`);
  // git runs as the daemon's user: a git, or a directory above it, that another user could write is their code.
  for (const p of new Set([git, fs.realpathSync(git)])) {
    const weak = writableChainAt(p);
    if (weak) throw sourceInsecure(weak.path, weak.path === p ? 'git program' : 'directory above the git program', weak.mode, `another user could make the daemon run their code as git (found first in the trusted PATH ${ctx.trustedPath})`);
  }
  const repo = path.join(ctx.scratch, 'repo.git');
  const local = ['--git-dir', repo, ...hardening(source.remote)];
  await runGit(git, where, { verb: 'init', args: ['init', '--bare', '--quiet', '--template=', repo], max: 64 * 1024, what: 'output of git init' }, ctx);
  await runGit(git, where, { verb: 'fetch', args: [...local, 'fetch', '--quiet', '--depth=1', '--no-tags', '--no-recurse-submodules', '--no-write-fetch-head', '--', source.remote, `+${source.ref}:refs/warden/fleet`], max: 64 * 1024, what: 'output of git fetch' }, ctx);
  const names = FILES.map((f) => `refs/warden/fleet:${source.path}${f.suffix}`);
  const check = (await runGit(git, where, { verb: 'cat-file', args: [...local, 'cat-file', '--batch-check'], input: names.join('\n') + '\n', max: 64 * 1024, what: 'output of git cat-file' }, ctx)).toString('utf8').split('\n');
  const files: Buffer[] = [];
  for (const [i, f] of FILES.entries()) {
    const m = /^([0-9a-f]{40,64}) (\S+) (\d+)$/.exec(check[i] ?? '');
    if (!m) throw fetchFailed(where, `the commit has no ${f.what} at ${source.path}${f.suffix}`);
    if (m[2] !== 'blob') throw fetchFailed(where, `${source.path}${f.suffix} is a ${m[2]} in the commit, not a file`);
    if (Number(m[3]) > f.max) throw tooLarge(`${where}${f.suffix}`, f.what, f.max, Number(m[3]));
    files.push(await runGit(git, where, { verb: 'cat-file', args: [...local, 'cat-file', 'blob', m[1] as string], max: f.max, what: f.what }, ctx));
  }
  return { bundle: files[0] as Buffer, signature: files[1] as Buffer };
}
