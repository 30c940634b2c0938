// Printing for humans (aligned columns) and for scripts (--json, one document on stdout).

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function printTable(rows: string[][]): void {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  for (const row of rows) {
    process.stdout.write(row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ') + '\n');
  }
}

export function line(text = ''): void {
  process.stdout.write(text + '\n');
}

export function shortSha(sha: string): string {
  return sha.slice(0, 16);
}
