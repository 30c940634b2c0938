import fs from 'node:fs';

// Reading /proc: the processes that exist (pid, parent, group, state, start time), which live (non-zombie)
// processes are in a process group, a process's start time (to tell a pid from a later process that reused
// it) and its real uid.

export interface ProcStat {
  pid: number;
  state: string;
  ppid: number;
  pgrp: number;
  starttime: string;
  /** The kernel's per-process flags (PF_*), e.g. PF_FORKNOEXEC: forked and has not exec'd since. */
  flags: number;
}

/** PF_FORKNOEXEC (include/linux/sched.h): set by fork, cleared by exec. */
export const PF_FORKNOEXEC = 0x40;

/** Parses /proc/PID/stat; the command name is in parentheses and may itself hold spaces and parentheses. */
export function readProcStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  // After "pid (comm) ": state is field 3, ppid field 4, pgrp field 5, flags field 9, starttime field 22 (1-based
  // in proc(5)).
  return { pid, state: fields[0] ?? '?', ppid: Number(fields[1]), pgrp: Number(fields[2]), flags: Number(fields[6]), starttime: fields[19] ?? '' };
}

function live(st: ProcStat | undefined): st is ProcStat {
  return st !== undefined && st.state !== 'Z' && st.state !== 'X';
}

/** Every live (non-zombie) process on the machine. */
export function liveProcesses(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = readProcStat(Number(name));
    if (live(st)) out.push(st);
  }
  return out;
}

/** Live members of a process group, zombies excluded. */
export function groupMembers(pgid: number): number[] {
  return liveProcesses()
    .filter((st) => st.pgrp === pgid)
    .map((st) => st.pid);
}

/** The start time of a process (clock ticks since boot), or undefined when it does not exist. */
export function startTimeOf(pid: number): string | undefined {
  const st = readProcStat(pid);
  return st && st.state !== 'Z' ? st.starttime : undefined;
}

/** The real uid of a process (the "Uid:" line of /proc/PID/status), or undefined when it is gone. */
export function realUidOf(pid: number): number | undefined {
  try {
    const m = /^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}
