import fs from 'node:fs';
import type { RawSession } from './warden.js';

// The module guard's gate (docs/adr/0019-fast-launch.md), seen from outside: a server's node started by `run`
// and waiting, before any server code, in read(2) on its file descriptor 3.

/** read(2)'s number in /proc/PID/syscall, per architecture. */
const READ_SYSCALL = process.arch === 'arm64' ? '63' : '0';

/** The server's process (its command line names `script`), once its main thread is blocked reading fd 3;
 *  undefined when the session ends first or after 30 s. Polls /proc: there is no event to wait for. */
export async function blockedAtGate(script: string, session: RawSession): Promise<number | undefined> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && session.proc.exitCode === null) {
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (!fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(script)) continue;
        const call = fs.readFileSync(`/proc/${entry}/syscall`, 'utf8').split(' ');
        if (call[0] === READ_SYSCALL && call[1] === '0x3') return Number(entry);
      } catch {
        // gone, or not ours to read
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return undefined;
}
