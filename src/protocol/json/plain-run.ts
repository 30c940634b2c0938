import { isAscii } from 'node:buffer';
import { plainInWasm } from './plain-scan.js';

// The test the byte reader puts a long string to before anything else: is it one plain run of ASCII? One SIMD
// pass where this node runs WebAssembly (plain-scan.ts), else native scans and a loop over words (below).

/** From this many bytes on, a string's run is checked in the bytes (plainAscii) first (a tool's result text);
 *  shorter strings are scanned byte by byte. */
export const LONG_RUN = 4096;

/** True when `b` holds only ASCII bytes from 0x20 that are neither '"' nor a backslash (a string's plain run). */
export function plainAscii(b: Buffer): boolean {
  return plainInWasm(b) ?? plainAsciiInJs(b);
}

/** plainAscii without WebAssembly (where it is not available; and the tests' second opinion). */
export function plainAsciiInJs(b: Buffer): boolean {
  return isAscii(b) && b.indexOf(0x5c) < 0 && b.indexOf(0x22) < 0 && noControl(b);
}

/** True when ASCII bytes `b` hold no byte below 0x20 (for bytes from 0x80 the answer means nothing). */
export function noControl(b: Buffer): boolean {
  // No byte below 0x20: with every byte below 0x80, adding 0x60 to each byte of a 32-bit word carries into
  // no other byte and sets a byte's top bit exactly when that byte is from 0x20. The words are ANDed together,
  // eight at a time, and the top bits looked at once at the end (a branch a word cost twice as much).
  const n = b.length;
  let i = 0;
  const head = Math.min(n, (4 - (b.byteOffset & 3)) & 3);
  for (; i < head; i++) if ((b[i] as number) < 0x20) return false;
  const words = (n - i) >>> 2;
  const top = 0x80808080 | 0;
  let all = -1;
  if (words > 0) {
    const w = new Int32Array(b.buffer, b.byteOffset + i, words);
    const add = 0x60606060;
    let k = 0;
    for (; k + 8 <= words; k += 8) {
      all &=
        ((w[k] as number) + add) & ((w[k + 1] as number) + add) & ((w[k + 2] as number) + add) & ((w[k + 3] as number) + add) &
        ((w[k + 4] as number) + add) & ((w[k + 5] as number) + add) & ((w[k + 6] as number) + add) & ((w[k + 7] as number) + add);
    }
    for (; k < words; k++) all &= (w[k] as number) + add;
    i += words * 4;
  }
  for (; i < n; i++) if ((b[i] as number) < 0x20) return false;
  return (all & top) === top;
}
