import fs from 'node:fs';
import { properLockfile } from '../proper-lockfile.js';
import { ownerOnlyLockFs } from '../owner-lock.js';
import { WardenError } from '../error.js';
import { checkTrusted } from '../store/perms.js';
import { GENESIS, lineHash } from './chain.js';
import type { AuditEvent } from './events.js';

// Appending to the hash-chained audit log. Writers in other processes (twenty `run`s at once) serialize on a
// lock next to the log: read the last line, hash it, append one line, fsync, unlock.

const MAX_LINE = 64 * 1024;
const TAIL = MAX_LINE + 2;

/** The last line of the log (without newline), or undefined for an empty or missing log. */
function lastLine(file: string): string | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size === 0) return undefined;
    const len = Math.min(size, TAIL);
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, size - len);
    const text = buf.toString('utf8').replace(/\n$/, '');
    const nl = text.lastIndexOf('\n');
    return nl >= 0 ? text.slice(nl + 1) : text;
  } finally {
    fs.closeSync(fd);
  }
}

const SHORT = 256;

/**
 * The line written in place of an event over the cap: the event with `truncated: true` and a `truncation`
 * record ({bytes, limit, field, items, kept, dropped}), its largest list cut to as many leading items as fit.
 * If no list can be cut far enough, a minimal marker: the event's name, server and short scalar fields only.
 */
function oversizeMarker(record: Record<string, unknown>, bytes: number): string {
  const fits = (o: unknown): string | undefined => {
    const l = JSON.stringify(o);
    return Buffer.byteLength(l) <= MAX_LINE ? l : undefined;
  };
  let field: string | undefined;
  let size = -1;
  for (const [k, v] of Object.entries(record)) {
    if (!Array.isArray(v)) continue;
    const n = JSON.stringify(v).length;
    if (n > size) [field, size] = [k, n];
  }
  if (field !== undefined) {
    const list = record[field] as unknown[];
    const attempt = (kept: number): string | undefined =>
      fits({ ...record, [field as string]: list.slice(0, kept), truncated: true, truncation: { bytes, limit: MAX_LINE, field, items: list.length, kept, dropped: list.length - kept } });
    // The most leading items that fit (binary search: at most ~15 serializations of a 64 KiB line).
    let lo = 0;
    let hi = list.length;
    let best = attempt(0);
    if (best !== undefined) {
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        const l = attempt(mid);
        if (l !== undefined) [lo, best] = [mid, l];
        else hi = mid - 1;
      }
      return best as string;
    }
  }
  // Keep the name, server and every short scalar field; drop long strings, lists and objects.
  const minimal: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) {
    if (typeof v === 'number' || typeof v === 'boolean' || v === null) minimal[k] = v;
    else if (typeof v === 'string') minimal[k] = v.length <= SHORT ? v : `${v.slice(0, SHORT)}…`;
  }
  const truncation = { bytes, limit: MAX_LINE, ...(field !== undefined ? { field, items: (record[field] as unknown[]).length, kept: 0, dropped: (record[field] as unknown[]).length } : {}) };
  return fits({ ...minimal, truncated: true, truncation }) ?? JSON.stringify({ ts: record.ts, prev: record.prev, event: record.event, truncated: true, truncation });
}

/** Refuses an audit log (or its lock) that another user owns or could write: the chain proves nothing then,
 *  and the warden never acts on (or appends to) a line someone else could have written. */
export function checkAuditFiles(file: string): void {
  checkTrusted(file, 'the audit log', 'file');
  checkTrusted(`${file}.lock`, 'the audit log lock', 'file');
}

/** Appends one event; returns the line written. */
export async function appendAudit(file: string, event: AuditEvent): Promise<string> {
  checkAuditFiles(file);
  if (!fs.existsSync(file)) fs.writeFileSync(file, '', { mode: 0o600, flag: 'a' });
  let release: () => Promise<void>;
  try {
    release = await (await properLockfile()).lock(file, {
      fs: ownerOnlyLockFs,
      retries: { retries: 200, factor: 1.2, minTimeout: 5, maxTimeout: 100 },
      // A writer killed while holding the lock (SIGKILL mid-append) leaves it behind: 2 s (proper-lockfile's
      // minimum; the holder refreshes it every second) instead of 10 s before others may take it over.
      stale: 2_000,
    });
  } catch (err) {
    throw new WardenError('AUDIT_LOCKED', `could not lock the audit log ${file} (${(err as Error).message}); if no warden is running, remove ${file}.lock`);
  }
  try {
    checkAuditFiles(file); // again under the lock: the lock directory is ours now, the log must still be
    const prev = lastLine(file);
    const record = { ts: new Date().toISOString(), prev: prev === undefined ? GENESIS : lineHash(prev), ...event };
    let line = JSON.stringify(record);
    if (Buffer.byteLength(line) > MAX_LINE) line = oversizeMarker(record, Buffer.byteLength(line));
    const fd = fs.openSync(file, 'a', 0o600);
    try {
      fs.writeSync(fd, line + '\n');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    return line;
  } finally {
    await release();
  }
}
