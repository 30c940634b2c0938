import { randomBytes } from 'node:crypto';
import fs from 'node:fs';

// The session marker: a random value put in the server's environment at launch. Every descendant inherits it
// unless it clears or rewrites its environment, so /proc/PID/environ finds descendants that left the process
// group (setsid, detached spawn) even after their parent exited. The value is 128 random bits, kept in the
// 0600 run record; a process carrying it is only ever a candidate (see session-scan.ts for the uid check).

export const MARKER_ENV = 'MCP_WARDEN_SESSION';

export function newMarker(): string {
  return randomBytes(16).toString('hex');
}

export function isMarker(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{32}$/.test(value);
}

/** True when the process's initial environment holds MCP_WARDEN_SESSION=<marker> (false if unreadable). */
export function carriesMarker(pid: number, marker: string): boolean {
  let environ: Buffer;
  try {
    environ = fs.readFileSync(`/proc/${pid}/environ`);
  } catch {
    return false; // gone, or another user's process that we may not read (and would not kill)
  }
  const entry = Buffer.from(`${MARKER_ENV}=${marker}`);
  for (let at = environ.indexOf(entry); at >= 0; at = environ.indexOf(entry, at + 1)) {
    const end = at + entry.length;
    if ((at === 0 || environ[at - 1] === 0) && (end === environ.length || environ[end] === 0)) return true;
  }
  return false;
}
