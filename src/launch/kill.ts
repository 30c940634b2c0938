import { killCgroup } from './cgroup.js';
import { startTimeOf } from './proc.js';
import { SessionScanner, type Member, type SessionTarget, type Via } from './session-scan.js';

// Stopping a server's whole session — its process group, and every descendant that left it (session-scan.ts)
// — and confirming every member is gone. process.kill(-pgid, 0) still succeeds while a zombie remains, so
// "gone" is decided by scanning /proc.

export interface StopTimings {
  /** How long the server may take to exit after its stdin closes, before its session gets SIGTERM. */
  graceMs: number;
  /** How long to wait after SIGTERM before SIGKILL. */
  termMs: number;
  /** How long to wait after SIGKILL for the session to vanish. */
  killMs: number;
}

export const DEFAULT_STOP: StopTimings = { graceMs: 2000, termMs: 2000, killMs: 2000 };

const POLL_MS = 25;
/** Rounds of "find, SIGSTOP what is new" before SIGKILL, against a process that forks while being killed. */
const STOP_ROUNDS = 10;

export interface StopResult {
  /** The last step needed: 'exited' (on its own), 'sigterm' or 'sigkill'. */
  by: 'exited' | 'sigterm' | 'sigkill';
  /** False if members survived SIGKILL past the bound (uninterruptible sleep), or the warden could not signal them. */
  gone: boolean;
  /** Every process of the session that was still there to be stopped (group members and escaped ones). */
  pids: number[];
  /** Those of `pids` outside the server's process group (setsid, detached, reparented). */
  escapedPids: number[];
  /** The mechanisms that applied to this session, in the order they were looked at. */
  containment: Via[];
}

/** Signals one member, unless its pid now belongs to a later process (start time differs). */
function signal(m: Member, sig: NodeJS.Signals): void {
  if (startTimeOf(m.pid) !== m.start) return;
  try {
    process.kill(m.pid, sig);
  } catch {
    // ESRCH: gone already; EPERM: not ours to signal (it then stays in the scan and `gone` is false).
  }
}

class Stopper {
  readonly scanner: SessionScanner;
  readonly signalled = new Map<number, Member>();

  constructor(readonly target: SessionTarget) {
    this.scanner = new SessionScanner(target);
  }

  scan(): Map<number, Member> {
    return this.scanner.scan();
  }

  send(members: Iterable<Member>, sig: NodeJS.Signals): void {
    let group = false;
    for (const m of members) {
      this.signalled.set(m.pid, m);
      signal(m, sig);
      group ||= m.via === 'group';
    }
    // The whole group too, for a member born since the scan (only while the scan still saw the group alive,
    // so that the pgid cannot have been taken by a new group).
    if (group && this.target.pgid !== undefined) {
      try {
        process.kill(-this.target.pgid, sig);
      } catch {
        // ESRCH: the group is gone.
      }
    }
  }

  async waitGone(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (;;) {
      if (this.scan().size === 0) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  /** cgroup.kill where there is a cgroup; then SIGSTOP rounds until nothing new appears, then SIGKILL all. */
  killAll(): void {
    if (this.target.cgroup) {
      for (const m of this.scan().values()) this.signalled.set(m.pid, m); // what cgroup.kill is about to take
      killCgroup(this.target.cgroup);
    }
    const stopped = new Map<number, Member>();
    for (let round = 0; round < STOP_ROUNDS; round++) {
      const fresh = [...this.scan().values()].filter((m) => !stopped.has(m.pid));
      if (fresh.length === 0) break;
      this.send(fresh, 'SIGSTOP');
      for (const m of fresh) stopped.set(m.pid, m);
    }
    this.send([...stopped.values(), ...this.scan().values()], 'SIGKILL');
  }

  result(by: StopResult['by'], gone: boolean): StopResult {
    const pids = [...this.signalled.keys()].sort((a, b) => a - b);
    const escapedPids = [...this.signalled.values()].filter((m) => m.pgrp !== this.target.pgid).map((m) => m.pid).sort((a, b) => a - b);
    const containment: Via[] = [];
    if (this.target.pgid !== undefined) containment.push('group');
    if (this.target.cgroup) containment.push('cgroup');
    if (this.target.marker) containment.push('marker');
    containment.push('tree');
    return { by, gone, pids, escapedPids, containment };
  }
}

/** SIGTERMs the session, then SIGKILLs what is left; 'exited' when nothing was left to signal. */
export async function stopSession(target: SessionTarget, t: StopTimings): Promise<StopResult> {
  const s = new Stopper(target);
  const first = s.scan();
  if (first.size === 0) return s.result('exited', true);
  s.send(first.values(), 'SIGTERM');
  if (await s.waitGone(t.termMs)) return s.result('sigterm', true);
  s.killAll();
  return s.result('sigkill', await s.waitGone(t.killMs));
}

/** Kills a session at once (a refused or unverifiable launch, or the orphan of a warden that died). */
export async function killSessionNow(target: SessionTarget, ms = 2000): Promise<StopResult> {
  const s = new Stopper(target);
  if (s.scan().size === 0) return s.result('exited', true);
  s.killAll();
  return s.result('sigkill', await s.waitGone(ms));
}
