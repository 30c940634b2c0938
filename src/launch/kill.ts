import { groupMembers } from './proc.js';

// Stopping a server's whole process group, descendants included, and confirming every member is gone.
// process.kill(-pgid, 0) still succeeds while a zombie remains, so "gone" is decided by scanning /proc.

export interface StopTimings {
  /** How long the server may take to exit after its stdin closes, before its group gets SIGTERM. */
  graceMs: number;
  /** How long to wait after SIGTERM before SIGKILL. */
  termMs: number;
  /** How long to wait after SIGKILL for the group to vanish. */
  killMs: number;
}

export const DEFAULT_STOP: StopTimings = { graceMs: 2000, termMs: 2000, killMs: 2000 };

const POLL_MS = 20;

/** Resolves true once no live process is left in the group, false if `ms` passes first. */
export async function waitGroupGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (groupMembers(pgid).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

function signalGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    // ESRCH: the group is already gone.
  }
}

export interface StopResult {
  /** The last step needed: 'exited' (on its own), 'sigterm' or 'sigkill'. */
  by: 'exited' | 'sigterm' | 'sigkill';
  /** False only if members survived SIGKILL past the bound (uninterruptible sleep). */
  gone: boolean;
}

/** SIGTERMs the group, then SIGKILLs what is left; 'exited' when nothing was left to signal. */
export async function stopGroup(pgid: number, t: StopTimings): Promise<StopResult> {
  if (groupMembers(pgid).length === 0) return { by: 'exited', gone: true };
  signalGroup(pgid, 'SIGTERM');
  if (await waitGroupGone(pgid, t.termMs)) return { by: 'sigterm', gone: true };
  signalGroup(pgid, 'SIGKILL');
  return { by: 'sigkill', gone: await waitGroupGone(pgid, t.killMs) };
}

/** Kills a group at once (a refused or unverifiable launch). */
export async function killGroupNow(pgid: number, ms = 2000): Promise<boolean> {
  signalGroup(pgid, 'SIGKILL');
  return waitGroupGone(pgid, ms);
}
