import { createInterface } from 'node:readline/promises';
import type { Artifact } from '../attest/plan.js';
import { escaped, escapedJson } from '../escape.js';

// Printing for humans (aligned columns) and for scripts (--json, one document on stdout).

/** One JSON document on stdout; what the one escaper's list holds is written as JSON escapes, so a script reads
 *  the same values and a terminal shows none of them raw. */
export function printJson(value: unknown): void {
  process.stdout.write(escapedJson(JSON.stringify(value, null, 2)) + '\n');
}

/** Aligned columns; every cell through the one escaper (a cell holds paths, names and fields from files). */
export function printTable(cells: string[][]): void {
  const rows = cells.map((row) => row.map(escaped));
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  for (const row of rows) {
    process.stdout.write(row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ') + '\n');
  }
}

/** A count of locked tools, with how many of them only a client offering capabilities is listed (the lock holds
 *  what a client offering roots, sampling and elicitation is listed; one offering none sees fewer). */
export function lockedTools(tools: number, conditional: number): string {
  return `${tools} tools${conditional > 0 ? ` (${conditional} of them listed only to a client offering roots, sampling or elicitation)` : ''}`;
}

export function line(text = ''): void {
  process.stdout.write(text + '\n');
}

/** Untrusted text of several lines (a client file's patch): each line through the one escaper, the line ends
 *  kept, so the patch keeps its lines. */
export function escapedLines(text: string): string {
  return text.split('\n').map(escaped).join('\n');
}

export function shortSha(sha: string): string {
  return sha.slice(0, 16);
}

/** An artifact about to be trusted, as `add` and `import` show it: kind, path, digest, symlink chain. */
export function describeArtifact(a: Artifact): string {
  const extra = a.kind === 'package' ? ` (${a.packages} packages, ${a.files} files)` : '';
  const via = a.chain.length > 1 ? `\n      via ${a.chain.map(escaped).join(' -> ')}` : '';
  return `  ${a.kind.padEnd(10)} ${escaped(a.path)}${extra}\n      sha256 ${a.sha256}${via}`;
}

/** Asks on the terminal (stderr, so stdout stays clean for scripts); true for y or yes. */
export async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/** A progress line on a terminal (overwritten by the next); nothing when stderr is a pipe or a file. */
export function progress(text: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${text}`);
}

/** Ends a progress line, if one was shown. */
export function progressDone(): void {
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
}

export { escaped } from '../escape.js';
