import fs from 'node:fs';
import { INITIALIZE, RawSession } from './warden.js';

// What the red-team memory tests read of a session: the warden's peak resident memory once its handshake was
// released (test/attack10/held-memory, test/attack11/pinned-chunks).

/** A memory field of /proc/PID/status in MiB: VmHWM, the peak resident memory so far, or VmRSS, the present. */
export function statusMiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
}

/** The peak resident memory of a process so far (VmHWM), in MiB. */
export const peakMiB = (pid: number): number => statusMiB(pid, 'VmHWM');

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
