import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TRUSTED_PATH, WARDEN, auditEvents } from '../helpers/warden.js';

// A daemon on machine B with a fleet source, and what the fleet tests wait on: audit events and metrics, each
// with a bound (never a sleep).

export interface RunningDaemon {
  proc: ChildProcessWithoutNullStreams;
  stderr: () => string;
  base: string;
  stop: () => Promise<void>;
}

/** Starts `mcp-warden daemon` on `home` and waits (bounded) until it serves /metrics. */
export async function startDaemon(home: string): Promise<RunningDaemon> {
  const proc = spawn(process.execPath, [WARDEN, '--home', home, 'daemon', '--listen', '127.0.0.1:0'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  await waitFor(() => /metrics at http/.test(stderr) || proc.exitCode !== null, () => `the daemon to be ready\n${stderr}`, 20_000);
  if (proc.exitCode !== null) throw new Error(`the daemon exited (${proc.exitCode}): ${stderr}`);
  const base = /metrics at (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(stderr)?.[1] ?? '';
  return {
    proc,
    stderr: () => stderr,
    base,
    stop: async () => {
      if (proc.exitCode !== null) return;
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    },
  };
}

/** Polls `pred` every 25 ms until it holds; fails after `ms` with `what`. */
export async function waitFor(pred: () => boolean | Promise<boolean>, what: () => string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The value of a metric in the daemon's /metrics (0 when absent; NaN when the whole family is absent). */
export async function metric(base: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(labels ? `${name}{${labels}} ` : `${name} `));
  if (!text.includes(`# TYPE ${name} `)) return Number.NaN;
  return Number(line?.split(' ').pop() ?? 0);
}

export const bundleEvents = (home: string): Record<string, unknown>[] => auditEvents(home).filter((e) => e.event === 'bundle_applied' || e.event === 'bundle_rejected');

/**
 * Sends SIGHUP (a reload and a fetch) and waits for the next bundle event of the home; returns it. `before` is the
 * number of bundle events before the signal.
 */
export async function fetchNow(d: RunningDaemon, home: string): Promise<Record<string, unknown>> {
  const before = bundleEvents(home).length;
  d.proc.kill('SIGHUP');
  await waitFor(() => bundleEvents(home).length > before, () => `a bundle event after SIGHUP\n${d.stderr()}`);
  return bundleEvents(home)[before] as Record<string, unknown>;
}

/** Writes the `fleet` section into the servers.json of `home` (as an operator would, before the daemon starts). */
export function setFleet(home: string, fleet: Record<string, unknown>): void {
  const file = path.join(home, 'servers.json');
  const json = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(file, JSON.stringify({ ...json, fleet }, null, 2) + '\n', { mode: 0o600 });
}

/** Copies a signed bundle and its signature to `dest` (and dest.sigstore.json). */
export function publish(bundle: string, dest: string): void {
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  fs.copyFileSync(bundle, dest);
  fs.copyFileSync(`${bundle}.sigstore.json`, `${dest}.sigstore.json`);
  fs.chmodSync(dest, 0o644);
  fs.chmodSync(`${dest}.sigstore.json`, 0o644);
}

const git = (cwd: string, ...args: string[]): string => execFileSync('git', ['-c', 'user.name=CI', '-c', 'user.email=ci@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** A bare repository under `root` (trust.git) whose branch main holds `bundle` at fleet/setup.bundle.json. */
export function gitFleetRepo(root: string, bundle: string): string {
  const bare = path.join(root, 'trust.git');
  git(root, 'init', '-q', '--bare', bare);
  const work = path.join(root, 'work');
  git(root, 'init', '-q', work);
  git(work, 'remote', 'add', 'origin', bare);
  publish(bundle, path.join(work, 'fleet', 'setup.bundle.json'));
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'publish');
  git(work, 'push', '-q', 'origin', 'HEAD:refs/heads/main');
  return bare;
}

/** Writes `dir/git` (mode `mode`): a git that appends its uid to `marker` and hands over to the real one. */
export function plantGit(dir: string, marker: string, mode: number): void {
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  fs.writeFileSync(path.join(dir, 'git'), `#!/bin/sh\necho "$(id -u)" >> '${marker}'\nexec '${realGit}' "$@"\n`, { mode });
}

/** Puts `dir` first on the trusted path of `home`'s servers.json. */
export function trustedPathFirst(home: string, dir: string): void {
  const file = path.join(home, 'servers.json');
  const json = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(file, JSON.stringify({ ...json, path: `${dir}:${TRUSTED_PATH}` }, null, 2) + '\n', { mode: 0o600 });
}
