/** Untrusted text (from a file or a registry) for the terminal, whole: JSON escapes for C0 controls, quotes and
 *  lone surrogates, \uXXXX for what a terminal acts on or that reorders or hides text (as surface/admit.ts
 *  printable does, without cutting it). */
export function escaped(s: string): string {
  return JSON.stringify(s)
    .slice(1, -1)
    .replace(/\\"/g, '"')
    .replace(/[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
