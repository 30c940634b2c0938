import fs from 'node:fs';
import path from 'node:path';

// The module guard's report file (fd 4 of a node server; ./module-guard.ts) as the warden keeps and reads it. The
// server can write to that file as well as its guard, so the file is held to REPORT_CAP while the session runs (cut
// back to it once a second) and read back only up to it; a report that went past it counts as tampered with, and
// says so (docs/adr/0014-module-guard-preload.md, "The report's bound").

/** The most of a report the warden keeps on disk or reads: 4 MiB. An honest report is far below it:
 *  server-everything's in learn mode with every file it loads reported (an empty attested set) is 346 lines,
 *  55,524 bytes (~160 a line, node 20 and 24); the cap is ~75 times that, ~26,000 such lines, or the 65 denied writes
 *  a thread reports at most, at the longest a denial line can be (~6 KiB), of 10 threads. */
export const REPORT_CAP = 4 * 1024 * 1024;
/** How often the report file's size is checked while the session runs. */
export const REPORT_BOUND_MS = 1000;

export interface LearnedModule {
  path: string;
  /** Stat key when the server loaded it ("dev:ino:size:mtimeNs:ctimeNs"; empty when it could not stat). */
  key: string;
}

export interface GuardReport {
  learned: LearnedModule[];
  refused: string[];
  /** Files the server require()d that node would load only as ES modules (at most 16). */
  requireEsm: string[];
  /** The report counts as tampered with (the server writes to it as well as its guard): it went past REPORT_CAP
   *  (`grew`: what came before the cap is read as ever), it was cut below what the warden had read of it (`shrank`:
   *  what was read before is kept), or it could not be read at the end (`unreadable`). `bytes`: the largest size the
   *  warden saw it at. A tampered report is not to be learned from (the server's word past any honest one). */
  overflow?: { bytes: number; cap: number; why: 'grew' | 'shrank' | 'unreadable' };
}

/** What the checks read of the report while the session ran: kept, whatever the server does to the file after. */
export interface ReportSeen {
  refused: string[];
  requireEsm: string[];
  /** The largest size the file had when checked. */
  largest: number;
  /** The file was found shorter than what had been read of it. */
  shrank: boolean;
}

export interface ReportBound {
  /** Reads what was appended since the last look (and cuts back past the cap): at each check, and where the warden
   *  is about to act on the server's output (before each chunk of its stdout is judged). Whether it read anything. */
  look(): boolean;
  /** Reads what is left (up to the cap), then gives what was seen. */
  seen(): ReportSeen;
  /** Stops the checks: before the descriptor is closed, which may then be reused for another file. */
  stop(): void;
}

/** Bytes read at one look at most (more waits for the next). */
const LOOK_BYTES = 256 * 1024;
/** A line longer than this is no refusal record (the guard cuts what it names to ~1 KiB): dropped, not kept. */
const MAX_KEPT_LINE = 64 * 1024;

/** Checks the report file on `fd` once a second, and at each look(): past `cap` it is cut back to `cap` (the server
 *  appends, so its next line lands there): on disk the file holds at most `cap` and what the server wrote since the
 *  last check. What each look reads (refusals, require(esm) records) is kept: a server that cuts the file later
 *  erases nothing the warden read, and a file found shorter than what was read counts as tampered with (and is read
 *  again from its start: what it holds now was written after the cut, or is kept below it). Every whole line read
 *  is also given to `onLine` (the guard's reports of denied writes, ./guard-denials.ts): the file has one reader. */
export function boundReport(fd: number, cap = REPORT_CAP, onLine?: (line: string) => void): ReportBound {
  const seen: ReportSeen = { refused: [], requireEsm: [], largest: 0, shrank: false };
  let offset = 0;
  let partial = '';
  const keep = (text: string): void => {
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    if (partial.length > MAX_KEPT_LINE) partial = '\u0000'; // a line too long to be a record: never parses
    if (onLine) for (const line of lines) onLine(line);
    const got = parseReport(lines.join('\n'), 'enforce');
    for (const r of got.refused) if (seen.refused.length < 16 && !seen.refused.includes(r)) seen.refused.push(r);
    for (const r of got.requireEsm) if (seen.requireEsm.length < 16 && !seen.requireEsm.includes(r)) seen.requireEsm.push(r);
  };
  const look = (): boolean => {
    try {
      const size = fs.fstatSync(fd).size;
      if (size > seen.largest) seen.largest = size;
      if (size < offset) {
        seen.shrank = true;
        offset = 0; // what is written after the cut lands from its new end: read the file again from its start
        partial = '';
      }
      if (size > cap) fs.ftruncateSync(fd, cap);
      const end = Math.min(size, cap, offset + LOOK_BYTES);
      if (end <= offset) return false;
      const buf = Buffer.allocUnsafe(end - offset);
      const n = fs.readSync(fd, buf, 0, buf.length, offset);
      offset += n;
      keep(buf.toString('utf8', 0, n));
      return n > 0;
    } catch {
      return false; // closed under the check (a launch that failed): nothing to bound
    }
  };
  const timer = setInterval(look, REPORT_BOUND_MS).unref();
  return {
    look,
    // At most cap / LOOK_BYTES looks: what the server wrote in its last moments, within the cap.
    seen: () => {
      while (look());
      return seen;
    },
    stop: () => clearInterval(timer),
  };
}

/** The report as read at the end, with what was seen while the session ran: refusals seen before are kept first. */
export function withSeen(read: GuardReport, seen: ReportSeen | undefined, size: number, cap = REPORT_CAP): GuardReport {
  if (!seen) return read;
  const refused = [...new Set([...seen.refused, ...read.refused])].slice(0, 16);
  const requireEsm = [...new Set([...seen.requireEsm, ...read.requireEsm])].slice(0, 16);
  const bytes = Math.max(seen.largest, size);
  const out: GuardReport = { ...read, refused, requireEsm };
  if (bytes > cap) out.overflow = { bytes, cap, why: 'grew' };
  else if (seen.shrank) out.overflow = { bytes, cap, why: 'shrank' };
  return out;
}

/** The report from its start, at most `cap` bytes of it, and the file's size. */
export function readReport(fd: number, cap = REPORT_CAP): { text: string; size: number } {
  const size = fs.fstatSync(fd).size;
  const buf = Buffer.alloc(Math.min(size, cap));
  let off = 0;
  while (off < buf.length) {
    const n = fs.readSync(fd, buf, off, buf.length - off, off);
    if (n === 0) break;
    off += n;
  }
  return { text: buf.subarray(0, off).toString('utf8'), size };
}

/** The guard's report, one JSON object a line; a line the server garbled (or the cap cut) is no record. */
export function parseReport(text: string, mode: 'enforce' | 'learn'): GuardReport {
  const learned = new Map<string, LearnedModule>();
  const refused: string[] = [];
  const requireEsm = new Set<string>();
  for (const line of text.split('\n')) {
    let r: { path?: unknown; key?: unknown; refused?: unknown; requireEsm?: unknown };
    try {
      r = JSON.parse(line) as typeof r;
    } catch {
      continue;
    }
    if (typeof r !== 'object' || r === null) continue;
    if (typeof r.refused === 'string' && refused.length < 16) refused.push(r.refused.slice(0, 300));
    if (typeof r.requireEsm === 'string' && requireEsm.size < 16) requireEsm.add(r.requireEsm.slice(0, 300));
    if (mode === 'learn' && typeof r.path === 'string' && path.isAbsolute(r.path)) learned.set(r.path, { path: r.path, key: typeof r.key === 'string' ? r.key : '' });
  }
  return { learned: [...learned.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)), refused, requireEsm: [...requireEsm] };
}
