import fs from 'node:fs';

// The warden's side of the denied writes a node server's module guard reports (preload/fs-denials.ts; docs/adr/
// 0068-denied-writes-reported-by-the-guard.md): the guard appends one JSON line per denied write to its report
// file, which the warden reads from where it stopped, once a second and once the session ended. What is read is
// the server's word: every field is checked and bounded here, the path is only ever recorded and printed escaped.

/** A denied write as the server's own node reported it (never the kernel's view: `source` says so). */
export interface GuardDenial {
  kind: 'write';
  path: string;
  call: string;
  errno: 'EROFS' | 'EACCES' | 'EPERM';
  truncated?: true;
  source: 'guard';
}

/** A read of one of the listed secret paths (the warden's list, never the server's text), as the server's own
 *  node reported it: where no decoy is placed (a warden that is not root), the hidden home answered "no such file". */
export interface GuardRead {
  kind: 'read';
  path: string;
  reason: 'guard';
}

/** How often the report file is read while the session runs. */
export const GUARD_DENIALS_POLL_MS = 1000;
/** Bytes read at one look: more waits for the next look (a server that writes faster is read at this pace). */
const READ_BYTES = 256 * 1024;
/** The longest line that can be a report (the guard cuts paths at 1024 characters, each at most 6 JSON bytes). */
const MAX_LINE = 8 * 1024;
const ERRNOS = new Set(['EROFS', 'EACCES', 'EPERM']);

/** One line of the report file as a denied write, or undefined (another record of the guard's, or garbage). */
export function parseGuardDenial(line: string, secrets: readonly string[] = []): GuardDenial | GuardRead | undefined {
  if (line.length > MAX_LINE) return undefined;
  if (line.startsWith('{"read":')) return parseGuardRead(line, secrets);
  if (!line.startsWith('{"denied":')) return undefined;
  let r: { denied?: { call?: unknown; errno?: unknown; path?: unknown; truncated?: unknown } };
  try {
    r = JSON.parse(line) as typeof r;
  } catch {
    return undefined;
  }
  const d = r.denied;
  if (typeof d !== 'object' || d === null) return undefined;
  if (typeof d.call !== 'string' || !/^[a-z0-9_]{1,32}$/.test(d.call)) return undefined;
  if (typeof d.errno !== 'string' || !ERRNOS.has(d.errno)) return undefined;
  if (typeof d.path !== 'string' || d.path.length === 0 || d.path.length > 1024) return undefined;
  return { kind: 'write', path: d.path, call: d.call, errno: d.errno as GuardDenial['errno'], ...(d.truncated === true ? { truncated: true as const } : {}), source: 'guard' };
}

/** A read report names one of `secrets`, the paths the warden gave the guard: anything else is no report. */
function parseGuardRead(line: string, secrets: readonly string[]): GuardRead | undefined {
  let r: { read?: { path?: unknown } };
  try {
    r = JSON.parse(line) as typeof r;
  } catch {
    return undefined;
  }
  const p = typeof r.read === 'object' && r.read !== null ? r.read.path : undefined;
  return typeof p === 'string' && secrets.includes(p) ? { kind: 'read', path: p, reason: 'guard' } : undefined;
}

export interface GuardDenialWatch {
  /** One look now, as the timer's (what was appended since the last). */
  look(): void;
  /** One last look (the session has ended), then no more. */
  close(): void;
  /** Stops without a last look (a launch that was refused). */
  stop(): void;
}

/** Reads the report file on `fd` for denied writes (and reads of `secrets`) from now on, giving `denied` each, at
 *  most `max` of them. */
export function watchGuardDenials(fd: number, denied: (d: GuardDenial | GuardRead) => void, max: number, secrets: readonly string[] = []): GuardDenialWatch {
  let offset = 0;
  let given = 0;
  let skipping = false; // inside a line longer than MAX_LINE: dropped up to its end
  const buf = Buffer.alloc(READ_BYTES);
  /** Reads one window from where it stopped; whether it moved on. */
  const look = (): boolean => {
    if (given >= max) return false;
    let n: number;
    try {
      n = fs.readSync(fd, buf, 0, READ_BYTES, offset);
      if (n === 0 && offset > 0 && fs.fstatSync(fd).size < offset) {
        // Cut below what was read (alerted as guard_report_overflow why shrank, src/launch/guard-report.ts): read
        // again from its start, or what is written after the cut would wait until the file grew past `offset`.
        offset = 0;
        skipping = false;
        n = fs.readSync(fd, buf, 0, READ_BYTES, 0);
      }
    } catch {
      return false; // closed under the watch: nothing more to read
    }
    let start = 0;
    for (let nl = buf.indexOf(10, 0); nl !== -1 && nl < n; nl = buf.indexOf(10, start)) {
      if (!skipping) {
        const d = parseGuardDenial(buf.toString('utf8', start, nl), secrets);
        if (d && given < max) {
          given++;
          denied(d);
        }
      }
      skipping = false;
      start = nl + 1;
    }
    if (start === 0 && n === READ_BYTES) {
      skipping = true; // no line end in a whole read: not a report
      start = n;
    } else if (n - start > MAX_LINE) {
      skipping = true;
      start = n;
    }
    offset += start;
    return start > 0;
  };
  const timer = setInterval(look, GUARD_DENIALS_POLL_MS).unref();
  return {
    look() {
      look();
    },
    close() {
      clearInterval(timer);
      for (let i = 0; i < 64 && look(); i++); // what the server wrote in its last moments, within 16 MiB
    },
    stop() {
      clearInterval(timer);
    },
  };
}
