import type { JsonReadErrorKind } from './reader.js';

// The reader's slow path for a string: escapes, and the refusals (control characters, bad escapes, lone
// surrogates). Most strings never come here (reader.ts takes a plain run as it is).

/** A refusal inside a string, at an index of the text it was read from (the reader places it in the input). */
export class StringFault {
  constructor(
    readonly kind: JsonReadErrorKind,
    readonly detail: string,
    readonly at: number,
  ) {}
}

/** Reads a string whose content starts at src[from] (just past its opening quote): its value, and the index
 *  just past its closing quote. Throws StringFault. */
export function readEscaped(src: string, from: number): { value: string; end: number } {
  let i = from;
  let out = '';
  let runStart = i;
  for (;;) {
    if (i >= src.length) throw new StringFault('syntax', 'unterminated string', i);
    const c = src.charCodeAt(i);
    if (c === 0x22) {
      out += src.slice(runStart, i);
      checkSurrogates(out, runStart);
      return { value: out, end: i + 1 };
    }
    if (c < 0x20) throw new StringFault('syntax', 'unescaped control character in string', i);
    if (c === 0x5c) {
      out += src.slice(runStart, i);
      const e = src.charCodeAt(i + 1);
      switch (e) {
        case 0x22: out += '"'; break;
        case 0x5c: out += '\\'; break;
        case 0x2f: out += '/'; break;
        case 0x62: out += '\b'; break;
        case 0x66: out += '\f'; break;
        case 0x6e: out += '\n'; break;
        case 0x72: out += '\r'; break;
        case 0x74: out += '\t'; break;
        case 0x75: {
          const hex = src.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new StringFault('syntax', 'invalid \\u escape', i);
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
          break;
        }
        default:
          throw new StringFault('syntax', 'invalid escape', i);
      }
      i += 2;
      runStart = i;
      continue;
    }
    // Anything else is taken as it is: skip the run of such characters in one native scan.
    ORDINARY.lastIndex = i + 1;
    ORDINARY.test(src);
    i = ORDINARY.lastIndex;
  }
}

// A sticky run (it matches the empty run too) of what a scan passes over without looking: everything but a
// quote, a backslash and a control character.
const ORDINARY = /[^"\\\u0000-\u001f]*/y;

function checkSurrogates(s: string, at: number): void {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const n = s.charCodeAt(i + 1);
      if (n >= 0xdc00 && n <= 0xdfff) {
        i++;
        continue;
      }
      throw new StringFault('lone_surrogate', 'lone surrogate in string', at);
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      throw new StringFault('lone_surrogate', 'lone surrogate in string', at);
    }
  }
}
