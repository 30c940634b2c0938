import fs from 'node:fs';
import { INITIALIZE, RawSession } from './warden.js';

// What the red-team memory tests read of a session: the warden's peak resident memory once its handshake was
// released (test/attack10/held-memory, test/attack11/pinned-chunks).

/** The peak resident memory of a process so far (VmHWM), in MiB. */
export function peakMiB(pid: number): number {
  return Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
}

/** Initializes a session of server `id`, and returns the answer to initialize with the warden's peak memory
 *  by then (the result is released once the handshake is judged: every held line was read and kept). */
export async function handshakePeak(home: string, id: string): Promise<{ answer: Record<string, unknown>; peak: number }> {
  const s = new RawSession(home, id);
  s.send(INITIALIZE + '\n');
  const answer = await s.message(1);
  const peak = peakMiB(s.proc.pid as number);
  s.close();
  await s.exited;
  return { answer, peak };
}
