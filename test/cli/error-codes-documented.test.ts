import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WardenError, type WardenErrorCode } from '../../src/error.js';
import { ROOT } from '../helpers/warden.js';

// Every stable error code a user can meet is in the error table of docs/operations.md, with the exit code the
// code really has: the table is where a user looks a code up.

/** The codes of the WardenErrorCode union, read from src/error.ts (a type has no runtime list). */
function codes(): WardenErrorCode[] {
  const text = fs.readFileSync(path.join(ROOT, 'src/error.ts'), 'utf8');
  const union = /export type WardenErrorCode =([^;]*);/.exec(text)?.[1] ?? '';
  return [...union.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1] as WardenErrorCode);
}

describe('the error table of docs/operations.md', () => {
  it('lists every error code with its exit code', () => {
    const table = fs.readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
    const all = codes();
    expect(all.length).toBeGreaterThan(50);
    const wrong: string[] = [];
    for (const code of all) {
      const row = table.split('\n').find((l) => l.startsWith('|') && l.split('|')[1]?.includes(`\`${code}\``));
      const exit = new WardenError(code, 'x').exitCode;
      if (!row) wrong.push(`${code}: not in the table`);
      else if (row.split('|')[2]?.trim() !== String(exit)) wrong.push(`${code}: the table says exit ${row.split('|')[2]?.trim()}, the code has ${exit}`);
    }
    expect(wrong).toEqual([]);
  });
});
