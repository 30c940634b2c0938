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
  /** The report went past REPORT_CAP: the largest size the warden saw, in bytes, and the cap. What came before the
   *  cap is read as ever; a flooded report is not to be learned from (the server's word past any honest size). */
  overflow?: { bytes: number; cap: number };
}

export interface ReportBound {
  /** Checks (and cuts) once more, then gives the largest size the file had when checked. */
  largest(): number;
  /** Stops the checks: before the descriptor is closed, which may then be reused for another file. */
  stop(): void;
}

/** Checks the report file on `fd` once a second; past `cap` it is cut back to `cap` (the server appends, so its next
 *  line lands there): on disk the file holds at most `cap` and what the server wrote since the last check. */
export function boundReport(fd: number, cap = REPORT_CAP): ReportBound {
  let largest = 0;
  const check = (): void => {
    try {
      const size = fs.fstatSync(fd).size;
      if (size > largest) largest = size;
      if (size > cap) fs.ftruncateSync(fd, cap);
    } catch {
      // closed under the check (a launch that failed): nothing to bound
    }
  };
  const timer = setInterval(check, REPORT_BOUND_MS).unref();
  return {
    largest: () => (check(), largest),
    stop: () => clearInterval(timer),
  };
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
