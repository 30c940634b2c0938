// A growable buffer that JSON text is written into as UTF-8, for the canonical writer (canonical.ts): the
// admission hashes bytes and never needs the text, and text built by concatenation left ~10 MB of garbage per
// 1 MiB listing (collecting it was a third of the admission). One sink is reused from call to call.

const INITIAL = 1 << 16;
const KEPT = 1 << 20; // a buffer a huge value grew beyond this is not kept for the next value

const HEX = '0123456789abcdef';

/** A string of ASCII that JSON.stringify writes as it is (no quote, backslash or control character). */
const PRINTABLE_ASCII = /^[\u0020\u0021\u0023-\u005b\u005d-\u007f]*$/;
const LONG = 24; // below this, the loop is as fast as the test and the call

export class ByteSink {
  private buf = Buffer.allocUnsafe(INITIAL);
  pos = 0;

  /** Empties the sink (what was written before is overwritten by what comes next). */
  reset(): void {
    if (this.buf.length > KEPT) this.buf = Buffer.allocUnsafe(INITIAL); // left by a value that failed
    this.pos = 0;
  }

  /** What was written since the reset: a view, valid until the sink is written again. A buffer a huge value
   *  grew is left to the view (and freed with it), the sink starting afresh. */
  bytes(): Buffer {
    const view = this.buf.subarray(0, this.pos);
    if (this.buf.length > KEPT) this.buf = Buffer.allocUnsafe(INITIAL);
    return view;
  }

  private reserve(n: number): Buffer {
    if (this.pos + n > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.pos + n));
      this.buf.copy(grown, 0, 0, this.pos);
      this.buf = grown;
    }
    return this.buf;
  }

  byte(c: number): void {
    const b = this.pos < this.buf.length ? this.buf : this.reserve(1);
    b[this.pos++] = c;
  }

  /** Text known to be ASCII (numbers, literals). */
  ascii(s: string): void {
    const b = this.reserve(s.length);
    let p = this.pos;
    for (let i = 0; i < s.length; i++) b[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** A string as JSON.stringify writes it (which is RFC 8785's escaping), in UTF-8: '"' and '\' escaped with
   *  a backslash, the C0 controls as \b \t \n \f \r or \u00xx, a lone surrogate as \uxxxx (lower-case hex),
   *  everything else as itself, a surrogate pair as one 4-byte character. */
  string(s: string): void {
    const n = s.length;
    // A UTF-16 unit is at most 3 bytes of UTF-8; an escape (up to 6) makes room for itself.
    let b = this.reserve(3 * n + 2);
    let p = this.pos;
    b[p++] = 0x22;
    if (n > LONG && PRINTABLE_ASCII.test(s)) {
      // Nothing to escape or encode: a native copy beats the loop below on a long string.
      p += b.write(s, p, 'latin1');
      b[p++] = 0x22;
      this.pos = p;
      return;
    }
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        if (c >= 0x20 && c !== 0x22 && c !== 0x5c) {
          b[p++] = c;
          continue;
        }
        if (p + 6 + 3 * (n - i) > b.length) {
          this.pos = p;
          b = this.reserve(6 + 3 * (n - i) + 1);
        }
        b[p++] = 0x5c;
        const short = c === 0x22 ? 0x22 : c === 0x5c ? 0x5c : c === 0x08 ? 0x62 : c === 0x09 ? 0x74 : c === 0x0a ? 0x6e : c === 0x0c ? 0x66 : c === 0x0d ? 0x72 : 0;
        if (short) b[p++] = short;
        else p = unicodeEscape(b, p, c);
      } else if (c < 0x800) {
        b[p++] = 0xc0 | (c >> 6);
        b[p++] = 0x80 | (c & 0x3f);
      } else if (c < 0xd800 || c > 0xdfff) {
        b[p++] = 0xe0 | (c >> 12);
        b[p++] = 0x80 | ((c >> 6) & 0x3f);
        b[p++] = 0x80 | (c & 0x3f);
      } else {
        const d = c <= 0xdbff ? s.charCodeAt(i + 1) : 0; // NaN past the end: no pair
        if (d >= 0xdc00 && d <= 0xdfff) {
          const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          b[p++] = 0xf0 | (cp >> 18);
          b[p++] = 0x80 | ((cp >> 12) & 0x3f);
          b[p++] = 0x80 | ((cp >> 6) & 0x3f);
          b[p++] = 0x80 | (cp & 0x3f);
          i++;
        } else {
          if (p + 6 + 3 * (n - i) > b.length) {
            this.pos = p;
            b = this.reserve(6 + 3 * (n - i) + 1);
          }
          b[p++] = 0x5c;
          p = unicodeEscape(b, p, c);
        }
      }
    }
    b[p++] = 0x22;
    this.pos = p;
  }
}

/** Writes "u" and four lower-case hex digits of `c` (the backslash is written by the caller). */
function unicodeEscape(b: Buffer, p: number, c: number): number {
  b[p++] = 0x75;
  b[p++] = HEX.charCodeAt(c >> 12);
  b[p++] = HEX.charCodeAt((c >> 8) & 0xf);
  b[p++] = HEX.charCodeAt((c >> 4) & 0xf);
  b[p++] = HEX.charCodeAt(c & 0xf);
  return p;
}
