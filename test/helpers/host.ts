import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT } from './warden.js';

// What a few tests need from the machine beyond node and npm. `.ci/run` installs it (docs/testing.md); a test
// that needs a missing one fails at once with one line saying what is missing and how to get it, instead of
// waiting for its timeout on a child that never started.

const TOOLS = {
  python3: { apt: 'python3', for: 'an AF_UNIX datagram receiver, which node cannot bind, and inotify watches of opens and closes, which node cannot see' },
  'systemd-analyze': { apt: 'systemd', for: 'checking the shipped unit files' },
  script: { apt: 'bsdutils', for: 'giving a command a pseudo-terminal' },
  '/usr/bin/logger': { apt: 'bsdutils', for: 'the journald alert sink, which runs it' },
  cc: { apt: 'gcc', for: 'building a shared library' },
  'unix-dgram': { apt: 'python3 make g++, then npm ci', for: 'the sd_notify transport, an optional native module npm ci builds' },
} as const;

export type HostTool = keyof typeof TOOLS;

function present(tool: HostTool): boolean {
  if (tool === 'unix-dgram') {
    try {
      createRequire(path.join(ROOT, 'package.json'))('unix-dgram');
      return true;
    } catch {
      return false;
    }
  }
  const r = spawnSync(tool, ['--version'], { stdio: 'ignore', timeout: 10_000 });
  return !r.error && r.status === 0;
}

const seen = new Map<HostTool, boolean>();

/** Throws one line naming each missing tool, what it is for and the Debian packages that give it. */
export function requireHost(...tools: HostTool[]): void {
  const missing = tools.filter((t) => {
    if (!seen.has(t)) seen.set(t, present(t));
    return !seen.get(t);
  });
  if (missing.length === 0) return;
  const list = missing.map((t) => `${t} (${TOOLS[t].for}; Debian: apt-get install ${TOOLS[t].apt})`).join(', ');
  throw new Error(`missing on this host: ${list}. .ci/run installs what the tests need; see docs/testing.md.`);
}

/** A node that uid 65534 (the tests' "other user", as root) can run: the one running the tests, unless it lives
 *  where that uid cannot enter (a node under a user's home, as nvm installs it); then a hard link to it, or a
 *  copy, at `dir`/node-for-65534 (`dir` must be enterable by others: mode 0711). */
export function nodeFor65534(dir: string): string {
  const canRun = (node: string): boolean => spawnSync(node, ['-e', ''], { uid: 65534, gid: 65534, cwd: '/', stdio: 'ignore', timeout: 30_000 }).status === 0;
  if (canRun(process.execPath)) return process.execPath;
  const copy = path.join(dir, 'node-for-65534');
  try {
    fs.linkSync(process.execPath, copy);
  } catch {
    fs.copyFileSync(process.execPath, copy);
  }
  fs.chmodSync(copy, 0o755);
  if (!canRun(copy)) throw new Error(`uid 65534 can run neither ${process.execPath} nor a copy of it at ${copy}`);
  return copy;
}
