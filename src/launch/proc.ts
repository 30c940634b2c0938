import fs from 'node:fs';

// Reading /proc: which live (non-zombie) processes are in a process group, and a process's start time (to
// tell a pid from a later process that reused it).

interface ProcStat {
  pid: number;
  state: string;
  pgrp: number;
  starttime: string;
}

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
  // After "pid (comm) ": state is field 3, pgrp field 5, starttime field 22 (1-based in proc(5)).
  return { pid, state: fields[0] ?? '?', pgrp: Number(fields[2]), starttime: fields[19] ?? '' };
}

/** Live members of a process group, zombies excluded. */
export function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = readProcStat(Number(name));
    if (st && st.pgrp === pgid && st.state !== 'Z' && st.state !== 'X') out.push(st.pid);
  }
  return out;
}

/** The start time of a process (clock ticks since boot), or undefined when it does not exist. */
export function startTimeOf(pid: number): string | undefined {
  const st = readProcStat(pid);
  return st && st.state !== 'Z' ? st.starttime : undefined;
}
