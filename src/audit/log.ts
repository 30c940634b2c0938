import fs from 'node:fs';
import lockfile from 'proper-lockfile';
import { WardenError } from '../error.js';
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

/** Appends one event; returns the line written. */
export async function appendAudit(file: string, event: AuditEvent): Promise<string> {
  if (!fs.existsSync(file)) fs.writeFileSync(file, '', { mode: 0o600, flag: 'a' });
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(file, {
      retries: { retries: 200, factor: 1.2, minTimeout: 5, maxTimeout: 100 },
      // A writer killed while holding the lock (SIGKILL mid-append) leaves it behind: 2 s (proper-lockfile's
      // minimum; the holder refreshes it every second) instead of 10 s before others may take it over.
      stale: 2_000,
    });
  } catch (err) {
    throw new WardenError('AUDIT_LOCKED', `could not lock the audit log ${file} (${(err as Error).message}); if no warden is running, remove ${file}.lock`);
  }
  try {
    const prev = lastLine(file);
    const record = { ts: new Date().toISOString(), prev: prev === undefined ? GENESIS : lineHash(prev), ...event };
    let line = JSON.stringify(record);
    if (Buffer.byteLength(line) > MAX_LINE) {
      line = JSON.stringify({ ts: record.ts, prev: record.prev, event: event.event, truncated: true, note: `event exceeded ${MAX_LINE} bytes` });
    }
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
