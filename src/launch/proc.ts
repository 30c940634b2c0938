import fs from 'node:fs';
import path from 'node:path';

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

/**
 * Which live processes run from inside each of `dirs`: their executable, working directory or a command-line
 * argument (resolved against that directory) is the directory or lies below it. Processes whose /proc entries
 * cannot be read (another user's, as a non-root user) are not seen; without /proc nothing is found.
 */
export function processesUsing(dirs: readonly string[]): Map<string, number[]> {
  const found = new Map<string, number[]>();
  if (dirs.length === 0) return found;
  const real = (p: string): string => {
    try {
      return fs.realpathSync(p);
    } catch {
      return p;
    }
  };
  const targets = dirs.map((d) => ({ dir: d, forms: [...new Set([d, real(d)])] }));
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return found;
  }
  const link = (p: string): string | undefined => {
    try {
      return fs.readlinkSync(p).replace(/ \(deleted\)$/, '');
    } catch {
      return undefined;
    }
  };
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cwd = link(`/proc/${name}/cwd`);
    const exe = link(`/proc/${name}/exe`);
    let args: string[] = [];
    try {
      args = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
    } catch {
      // gone, or not ours to read
    }
    const paths = [cwd, exe, ...args.map((a) => (cwd ? path.resolve(cwd, a) : a))].filter((p): p is string => p !== undefined);
    for (const { dir, forms } of targets) {
      if (paths.some((p) => forms.some((f) => p === f || p.startsWith(f + '/')))) found.set(dir, [...(found.get(dir) ?? []), Number(name)]);
    }
  }
  return found;
}
