import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { Engine } from './engine.js';

// Denied writes seen through bpftrace, for a root warden (docs/adr/0066-denied-writes-through-bpftrace.md). The
// sandbox refuses a write outside the grants in the kernel (EROFS from the read-only mount, EACCES or EPERM from
// a decoy's mode or a dropped capability), and only the server sees the error. A root warden runs bpftrace for
// each confined session with a program of its own (TRACE_PROGRAM: a fixed text, nothing of the server's in it),
// filtered by the session's cgroup id (its only parameter): at the entry of a write-intent system call the path
// argument is copied from the server's memory, and when the call returns EROFS, EACCES or EPERM one line is
// printed. The server is started only once the tracer is attached, so no write of its is missed before.
// Observation, not confinement: a tracer that cannot start or dies is reported, and the session goes on.

/** x86_64 system calls that create, remove, rename or change a name, with the argument that holds the path
 *  reported (the name created for rename, link and symlink), and open calls only with write-intent flags. */
const CALLS: Record<number, { name: string; path: number; flags?: number | 'how' }> = {
  2: { name: 'open', path: 0, flags: 1 },
  257: { name: 'openat', path: 1, flags: 2 },
  437: { name: 'openat2', path: 1, flags: 'how' },
  85: { name: 'creat', path: 0 },
  83: { name: 'mkdir', path: 0 },
  258: { name: 'mkdirat', path: 1 },
  133: { name: 'mknod', path: 0 },
  259: { name: 'mknodat', path: 1 },
  87: { name: 'unlink', path: 0 },
  263: { name: 'unlinkat', path: 1 },
  84: { name: 'rmdir', path: 0 },
  82: { name: 'rename', path: 1 },
  264: { name: 'renameat', path: 3 },
  316: { name: 'renameat2', path: 3 },
  86: { name: 'link', path: 1 },
  265: { name: 'linkat', path: 3 },
  88: { name: 'symlink', path: 1 },
  266: { name: 'symlinkat', path: 2 },
  76: { name: 'truncate', path: 0 },
  90: { name: 'chmod', path: 0 },
  268: { name: 'fchmodat', path: 1 },
  452: { name: 'fchmodat2', path: 1 },
  92: { name: 'chown', path: 0 },
  94: { name: 'lchown', path: 0 },
  260: { name: 'fchownat', path: 1 },
  280: { name: 'utimensat', path: 1 },
  235: { name: 'utimes', path: 0 },
  132: { name: 'utime', path: 0 },
  261: { name: 'futimesat', path: 1 },
  188: { name: 'setxattr', path: 0 },
  189: { name: 'lsetxattr', path: 0 },
  197: { name: 'removexattr', path: 0 },
  198: { name: 'lremovexattr', path: 0 },
  463: { name: 'setxattrat', path: 1 },
  466: { name: 'removexattrat', path: 1 },
};

/** O_WRONLY | O_RDWR | O_CREAT | O_TRUNC (the same on x86_64 and arm64). */
const WRITE_FLAGS = '0x243';
/** The errnos reported, by the negative value a call returns. */
const ERRNOS: Record<string, 'EROFS' | 'EACCES' | 'EPERM'> = { 30: 'EROFS', 13: 'EACCES', 1: 'EPERM' };
/** Bytes of the path read at entry: three 64-byte buffers (bpftrace 0.17 keeps each on the 512-byte BPF stack). */
export const PATH_BYTES = 192;

function program(): string {
  const byArg = new Map<number, number[]>();
  const lines: string[] = [];
  for (const [nr, c] of Object.entries(CALLS)) {
    if (c.flags === undefined) byArg.set(c.path, [...(byArg.get(c.path) ?? []), Number(nr)]);
    else if (c.flags === 'how') lines.push(`  if ($n == ${nr}) { if (*uptr((uint64 *)$a2) & ${WRITE_FLAGS}) { $p = $a${c.path}; } }`);
    else lines.push(`  if ($n == ${nr}) { if ($a${c.flags} & ${WRITE_FLAGS}) { $p = $a${c.path}; } }`);
  }
  for (const [arg, nrs] of byArg) lines.push(`  if (${nrs.map((n) => `$n == ${n}`).join(' || ')}) { $p = $a${arg}; }`);
  return [
    'BEGIN { printf("READY\\n"); }',
    // A line every 2 s: once the warden is gone, bpftrace's next write ends it (SIGPIPE) instead of tracing on.
    'interval:s:2 { printf("T\\n"); }',
    // Both programs run at every system call of the host: the cgroup test comes first (one helper call, no map),
    // so a call outside the session costs the tracepoint and that test alone. The arguments are read once, first
    // (read in the branches, bpftrace 0.17's code fails the verifier: "dereference of modified ctx ptr").
    'tracepoint:raw_syscalls:sys_enter /cgroup == $1/ {',
    '  $n = args->id; $p = (uint64)0; $a0 = args->args[0]; $a1 = args->args[1]; $a2 = args->args[2]; $a3 = args->args[3];',
    ...lines,
    '  if ($p != 0) { @a[tid] = buf(uptr((uint8 *)$p), 64); @b[tid] = buf(uptr((uint8 *)($p + 64)), 64); @c[tid] = buf(uptr((uint8 *)($p + 128)), 64); @w[tid] = 1; }',
    '}',
    // One program on exit (each program on raw_syscalls runs at every system call of the host).
    `tracepoint:raw_syscalls:sys_exit /cgroup == $1 && @w[tid]/ { $r = args->ret; if (${Object.keys(ERRNOS).map((e) => `$r == -${e}`).join(' || ')}) { printf("W %d %d %r%r%r\\n", args->id, - $r, @a[tid], @b[tid], @c[tid]); } delete(@a[tid]); delete(@b[tid]); delete(@c[tid]); delete(@w[tid]); }`,
    // bpftrace prints every map when it ends: what is left in them (a call that never returned) is the server's.
    'END { clear(@a); clear(@b); clear(@c); clear(@w); }',
    '',
  ].join('\n');
}

/** The tracer's program: fixed, built from the table above alone. The cgroup id is its one parameter ($1). */
export const TRACE_PROGRAM = program();

/** A denied write of a confined server: the path as the server gave it (its own bytes: untrusted, relative to its
 *  working directory or a descriptor, cut at PATH_BYTES), the call and the errno. */
export interface DeniedWrite {
  kind: 'write';
  path: string;
  call: string;
  errno: 'EROFS' | 'EACCES' | 'EPERM';
  /** The path was longer than PATH_BYTES (or could not be read whole from the server's memory). */
  truncated?: true;
}

/** The longest line the tracer prints (each of PATH_BYTES as \xNN, and the prefix); a longer one is no report. */
export const MAX_LINE = 32 + 4 * PATH_BYTES;
const LINE = /^W (\d{1,4}) (\d{1,3}) ((?:[\x20-\x7e])*)$/;

/** One line of the tracer as a denied write, or undefined (not a report of the program above). bpftrace's %r
 *  prints a byte outside printable ASCII as \xNN and every other byte as it is (a backslash too): the path is
 *  decoded back and cut at its first NUL (what followed it in the server's memory is never kept). */
export function parseTraceLine(line: string): DeniedWrite | undefined {
  if (line.length > MAX_LINE) return undefined;
  const m = LINE.exec(line);
  if (!m) return undefined;
  const call = CALLS[Number(m[1])];
  const errno = ERRNOS[m[2] as string];
  if (!call || !errno) return undefined;
  const bytes: number[] = [];
  const text = m[3] as string;
  for (let i = 0; i < text.length; i++) {
    const esc = /^\\x([0-9a-f]{2})/.exec(text.slice(i, i + 4));
    if (esc) {
      bytes.push(Number.parseInt(esc[1] as string, 16));
      i += 3;
    } else bytes.push(text.charCodeAt(i));
  }
  if (bytes.length > PATH_BYTES) return undefined;
  const end = bytes.indexOf(0);
  const path = Buffer.from(end === -1 ? bytes : bytes.slice(0, end)).toString('utf8');
  return { kind: 'write', path, call: call.name, errno, ...(end === -1 ? { truncated: true as const } : {}) };
}

/** Where the kernel's trace events are (bpftrace reads a tracepoint's id and format there), or undefined. */
function tracefs(): string | undefined {
  return ['/sys/kernel/tracing', '/sys/kernel/debug/tracing'].find((d) => fs.existsSync(`${d}/events/raw_syscalls/sys_enter/id`));
}

/** Why denied writes cannot be observed on this host with `bpftrace` (found on the trusted path, or undefined),
 *  or undefined when they can (bpf itself may still refuse: learnt when the tracer starts). */
export function writesUnobservable(bpftrace: Engine | undefined): string | undefined {
  if (process.getuid?.() !== 0) return 'the warden is not root (bpftrace needs CAP_BPF and CAP_PERFMON)';
  if (process.arch !== 'x64') return `the tracer's system call table is for x86_64 only (this is ${process.arch})`;
  if (!bpftrace) return 'bpftrace is not on the trusted path (Debian, Ubuntu: apt-get install bpftrace)';
  if (!tracefs()) return 'tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing; systemd mounts it at boot)';
  return undefined;
}

/** Why denied writes are not observed when servers.json turns the tracer off (launch event, status, doctor). */
export const TRACING_OFF = 'off by servers.json ("writeTracing": "off")';

/** How long bpftrace may take to compile, load and attach its program. */
export const ATTACH_MS = 15_000;
const MAX_STDERR = 512;
const STOP_MS = 1000;

export interface WriteTrace {
  /** Resolves, once, with why the tracer stopped while the session ran (never after close()). */
  died: Promise<string>;
  /** Stops it: SIGINT (it prints what it still holds and ends), SIGKILL after STOP_MS. */
  close(): Promise<void>;
}

/**
 * Starts bpftrace for the session whose cgroup id is `cgroupId`, resolving once its probes are attached (its
 * BEGIN line: bpftrace runs BEGIN after it attached every probe), or rejecting with why it could not start
 * within ATTACH_MS. `denied` gets each denied write; lines that are not reports are dropped. After `max` reports
 * the tracer is stopped (the session's cap: nothing more would be recorded), which is not a death.
 */
export function startWriteTrace(bpftrace: Engine, cgroupId: bigint, denied: (d: DeniedWrite) => void, max: number): Promise<WriteTrace> {
  return new Promise((resolve, reject) => {
    const child = spawn(bpftrace.file, ['-B', 'line', '-e', TRACE_PROGRAM, cgroupId.toString()], { stdio: ['ignore', 'pipe', 'pipe'], env: { BPFTRACE_STRLEN: '64' } });
    let stderr = '';
    let ready = false;
    let closed = false;
    let pending = '';
    let skipping = false;
    let reports = 0;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const close = async (): Promise<void> => {
      if (closed) return exited;
      closed = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_MS);
      await exited;
      clearTimeout(timer);
    };
    let dead: (why: string) => void = () => {};
    const died = new Promise<string>((r) => (dead = r));
    const why = (what: string): string => `${what}${stderr.trim() ? `: ${stderr.trim().split('\n').filter((l) => !/RLIMIT_MEMLOCK/.test(l)).join(' ').slice(-MAX_STDERR)}` : ''}`;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(why(`bpftrace did not attach within ${ATTACH_MS / 1000} s`)));
    }, ATTACH_MS);
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-4 * MAX_STDERR)));
    child.once('error', (e) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`${bpftrace.file}: ${e.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const what = why(`bpftrace exited (${code ?? signal})`);
      if (!ready) reject(new Error(what));
      else if (!closed) dead(what);
    });
    child.stdout.on('data', (d: Buffer) => {
      pending += d.toString('latin1');
      for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n')) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (!ready) {
          if (line !== 'READY') continue; // "Attaching N probes..." comes before the attach itself
          ready = true;
          clearTimeout(timer);
          resolve({ died, close });
        } else if (skipping) skipping = false; // the end of an overlong line
        else {
          const d = parseTraceLine(line);
          if (!d || closed) continue;
          denied(d);
          if (++reports >= max) void close();
        }
      }
      if (pending.length > MAX_LINE) {
        pending = ''; // an overlong line is no report: dropped up to its end
        skipping = true;
      }
    });
  });
}
