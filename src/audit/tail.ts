import fs from 'node:fs';
import { checkAuditFiles } from './log.js';

/** The audit events in the last `maxBytes` of the log (whole lines only), oldest first. */
export function recentEvents(file: string, maxBytes = 4 * 1024 * 1024): Record<string, unknown>[] {
  checkAuditFiles(file);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return [];
  }
  try {
    const size = fs.fstatSync(fd).size;
    const len = Math.min(size, maxBytes);
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, size - len);
    const lines = buf.toString('utf8').split('\n');
    if (len < size) lines.shift(); // a partial first line
    const out: Record<string, unknown>[] = [];
    for (const l of lines) {
      if (!l) continue;
      try {
        out.push(JSON.parse(l) as Record<string, unknown>);
      } catch {
        // `audit verify` reports broken lines; the status view skips them
      }
    }
    return out;
  } finally {
    fs.closeSync(fd);
  }
}
