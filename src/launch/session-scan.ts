import { cgroupProcs } from './cgroup.js';
import { carriesMarker } from './marker.js';
import { liveProcesses, realUidOf, type ProcStat } from './proc.js';

// Which live processes belong to a server's session, whatever their session or process group:
//   group   members of the server's process group (the kernel keeps strangers out of it)
//   cgroup  members of the session's cgroup, where there is one (nothing leaves it without privilege)
//   marker  processes whose environment carries the session marker, if their real uid is allowed
//   tree    descendants (by parent pid) of any of the above, if their real uid is allowed
// pid 1 and the warden itself are never part of a session. Each process is reported with its start time, so
// that a pid reused between the scan and a signal is not mistaken for it (see kill.ts).

export type Via = 'group' | 'cgroup' | 'marker' | 'tree';

export interface SessionTarget {
  /** The server's process group, or undefined when the record's leader pid was reused. */
  pgid: number | undefined;
  marker: string | undefined;
  cgroup: string | undefined;
  /** Real uids a marker or tree match may have (the warden's, and the server's at launch). */
  uids: number[];
}

export interface Member {
  pid: number;
  start: string;
  pgrp: number;
  via: Via;
}

export class SessionScanner {
  /** Marker lookups by "pid:start": a process's initial environment does not change while it lives. */
  private readonly markerCache = new Map<string, boolean>();

  constructor(readonly target: SessionTarget) {}

  scan(): Map<number, Member> {
    const { pgid, marker, cgroup, uids } = this.target;
    const procs = liveProcesses().filter((p) => p.pid !== 1 && p.pid !== process.pid);
    const byPid = new Map(procs.map((p) => [p.pid, p]));
    const found = new Map<number, Member>();
    const add = (p: ProcStat, via: Via): void => {
      if (!found.has(p.pid)) found.set(p.pid, { pid: p.pid, start: p.starttime, pgrp: p.pgrp, via });
    };
    const allowed = (p: ProcStat): boolean => {
      const u = realUidOf(p.pid);
      return u !== undefined && uids.includes(u);
    };
    if (pgid !== undefined) for (const p of procs) if (p.pgrp === pgid) add(p, 'group');
    if (cgroup) for (const pid of cgroupProcs(cgroup)) {
      const p = byPid.get(pid);
      if (p) add(p, 'cgroup');
    }
    if (marker) {
      const seen = new Set<string>();
      for (const p of procs) {
        if (found.has(p.pid)) continue;
        const key = `${p.pid}:${p.starttime}`;
        seen.add(key);
        let has = this.markerCache.get(key);
        if (has === undefined) this.markerCache.set(key, (has = carriesMarker(p.pid, marker)));
        if (has && allowed(p)) add(p, 'marker');
      }
      for (const key of this.markerCache.keys()) if (!seen.has(key)) this.markerCache.delete(key);
    }
    const children = new Map<number, ProcStat[]>();
    for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
    const queue = [...found.keys()];
    while (queue.length > 0) {
      for (const c of children.get(queue.pop() as number) ?? []) {
        if (found.has(c.pid) || !allowed(c)) continue;
        add(c, 'tree');
        queue.push(c.pid);
      }
    }
    return found;
  }
}
