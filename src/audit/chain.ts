import { createHash } from 'node:crypto';

// The chain rule: each line carries, as "prev", the sha256 of the bytes of the line before it (without its
// newline); the first line carries 64 zeros.

export const GENESIS = '0'.repeat(64);

export function lineHash(line: string | Buffer): string {
  return createHash('sha256').update(line).digest('hex');
}
