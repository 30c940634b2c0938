import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { tarball } from '../helpers/npm-pack.mjs';
import { SERVERS } from '../helpers/warden.js';
import { gitRepo } from '../attack4/common.js';

// Shared by the npm-* tests (issue 26, items 17-20: npm fetching what the warden's vetting never saw): a loopback
// stand-in for a hosted git service (GitHub's tarball host, reached through an https proxy npm is pointed at),
// and the hostile git dependencies it serves. Each writes a marker file when npm runs a program of the attacker's.

export interface GitHost {
  /** npm configuration that sends https requests through the stand-in and trusts its certificate. */
  env: Record<string, string>;
  /** The requests served so far ("CONNECT host:port", "GET /path STATUS"). */
  requests(): string[];
  /** Serves `files` as the tarball of github:OWNER/REPO at a fresh commit; returns the npm spec pinned to it. */
  serve(owner: string, repo: string, files: { rel: string; data: string; mode?: number }[]): string;
  close(): Promise<void>;
}

/** Starts the git host stand-in (test/servers/attack22/npm-git-host.mjs) with a certificate for codeload.github.com. */
export async function startGitHost(dir: string): Promise<GitHost> {
  const root = path.join(dir, 'git-host');
  fs.mkdirSync(root, { recursive: true });
  const cert = path.join(root, 'cert.pem');
  const key = path.join(root, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=codeload.github.com', '-addext', 'subjectAltName=DNS:codeload.github.com'], { stdio: 'ignore' });
  const log = path.join(root, 'requests.log');
  fs.writeFileSync(log, '');
  const child = spawn(process.execPath, [path.join(SERVERS, 'attack22/npm-git-host.mjs'), cert, key, root, log], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const proxy = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve((JSON.parse(out.slice(0, nl)) as { proxy: string }).proxy);
    });
    child.once('exit', (code, signal) => reject(new Error(`the git host stand-in exited (${code ?? signal}) before listening`)));
  });
  return {
    env: { npm_config_https_proxy: proxy, npm_config_cafile: cert },
    requests: () => fs.readFileSync(log, 'utf8').split('\n').filter(Boolean),
    serve(owner, repo, files) {
      const sha = crypto.randomBytes(20).toString('hex');
      fs.mkdirSync(path.join(root, owner, repo), { recursive: true });
      fs.writeFileSync(path.join(root, owner, repo, `${sha}.tgz`), tarball(files));
      return `github:${owner}/${repo}#${sha}`;
    },
    async close() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The files of a package whose preparation runs a program: npm prepares a git dependency that has a `prepare`
 *  script with `npm install` in its checkout, which reads the checkout's .npmrc (`git=./evil.sh`) and then fetches
 *  the git dependency `nested` with that "git". evil.sh appends to `marker`, then runs git. */
export function preparedFiles(dir: string, marker: string, manifest: Record<string, unknown>): { rel: string; data: string; mode?: number }[] {
  const nested = gitRepo(path.join(dir, `nested-${crypto.randomBytes(4).toString('hex')}`), { 'package.json': JSON.stringify({ name: 'nested', version: '1.0.0' }) });
  return [
    { rel: 'package.json', data: JSON.stringify({ ...manifest, scripts: { prepare: 'true' }, dependencies: { ...((manifest.dependencies as object | undefined) ?? {}), nested } }) },
    { rel: '.npmrc', data: 'git=./evil.sh\n' },
    { rel: 'evil.sh', data: `#!/bin/sh\necho "ran as $(id -u) in $(pwd)" >> '${marker}'\nexec git "$@"\n`, mode: 0o755 },
  ];
}

/** A git repository (served as git+file://) holding `files`; its URL. */
export function localGitRepo(dir: string, files: { rel: string; data: string; mode?: number }[]): string {
  return gitRepo(
    dir,
    Object.fromEntries(files.map((f) => [f.rel, f.data])),
    Object.fromEntries(files.filter((f) => f.mode !== undefined).map((f) => [f.rel, f.mode as number])),
  );
}

/** What a marker file holds ('' when no program of the attacker's ran). */
export const ran = (marker: string): string => (fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '');

/** The names in a home's store (entries and half-made ones; the store's own lock left out). */
export function storeNames(home: string): string[] {
  const store = path.join(home, 'store');
  return fs.existsSync(store) ? fs.readdirSync(store).filter((n) => !n.startsWith('.lock')).sort() : [];
}
