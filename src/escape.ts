/** Characters a person cannot see or that change how the rest reads: controls and format characters (bidi
 *  controls, zero-width ones, Unicode tags), private-use and unassigned code points, line and paragraph
 *  separators, variation selectors and the invisible fillers; each shown as \uXXXX or \u{XXXXX}. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\u{e0100}-\u{e01ef}]/gu;

/** A value shown to a person (the warden's question through the client, a refusal's explanation) must read as
 *  what it is. Stricter than `escaped` below and surface/admit.ts `printable`, whose BMP-only list misses tags,
 *  variation selectors and the fillers (docs/adr/0022; left as they are so their output does not change). */
export function escapeInvisible(text: string): string {
  return text.replace(INVISIBLE, (c) => {
    const cp = c.codePointAt(0) as number;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  });
}

/** Untrusted text (from a file or a registry) for the terminal, whole: JSON escapes for C0 controls, quotes and
 *  lone surrogates, \uXXXX for what a terminal acts on or that reorders or hides text (as surface/admit.ts
 *  printable does, without cutting it). */
export function escaped(s: string): string {
  return JSON.stringify(s)
    .slice(1, -1)
    .replace(/\\"/g, '"')
    .replace(/[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
