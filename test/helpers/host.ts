import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT } from './warden.js';

// What a few tests need from the machine beyond node and npm. `.ci/run` installs it (README, "Test"); a test
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
  throw new Error(`missing on this host: ${list}. .ci/run installs what the tests need; see README, "Test".`);
}
