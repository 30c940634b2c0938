import fs from 'node:fs';
import { GENESIS, lineHash } from './chain.js';
import { checkAuditFiles } from './log.js';

export type ChainResult =
  | { ok: true; lines: number }
  | { ok: false; lines: number; badLine: number; reason: string };

/** Walks the chain and names the first line (1-based) that breaks it. */
export function verifyChain(file: string): ChainResult {
  checkAuditFiles(file);
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  if (text === '') return { ok: true, lines: 0 };
  if (!text.endsWith('\n')) {
    const n = text.split('\n').length;
    return { ok: false, lines: n, badLine: n, reason: 'the last line has no newline (a torn or truncated write)' };
  }
  const lines = text.slice(0, -1).split('\n');
  let expected = GENESIS;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    let prev: unknown;
    try {
      prev = (JSON.parse(line) as { prev?: unknown }).prev;
    } catch {
      return { ok: false, lines: lines.length, badLine: i + 1, reason: 'not a JSON object' };
    }
    if (prev !== expected) {
      return {
        ok: false,
        lines: lines.length,
        badLine: i + 1,
        reason: i === 0 ? `expected prev ${GENESIS} (the first line), got ${String(prev)}` : `expected prev ${expected} (sha256 of line ${i}), got ${String(prev)}`,
      };
    }
    expected = lineHash(line);
  }
  return { ok: true, lines: lines.length };
}
