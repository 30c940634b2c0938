// The one escaper (ADR 0039): every string from a server, a client, a package, a registry, a bundle or a file
// that the warden prints (audit show, diff, status, verify, rules, reports on stderr, alerts, the questions it
// asks the user) shows each code point of ONE list as an escape, so a terminal never acts on bytes someone else
// chose, no line can be forged, and no text hides from the person reading. No other list exists in src/
// (test/escape.test.ts scans for one).

/**
 * The list: controls (C0, DEL, C1), format characters (bidi controls and marks, zero-width ones, soft hyphen,
 * Unicode tags U+E0000–E007F), private-use, unassigned and noncharacter code points, lone surrogates, line and
 * paragraph separators, every default-ignorable code point (variation selectors, invisible fillers, the
 * combining grapheme joiner, …), and the spaces other than U+0020 (they read as one and are not) plus the braille
 * blank. Emoji variation selectors are shown escaped too: a reviewer reads "\ufe0f", never loses text.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]|[^\P{Zs} ]/gu;

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

/** Untrusted text as a person may see it: each code point of the list as \uXXXX, or \u{XXXXX} above the BMP;
 *  everything else as it is. Idempotent (its output holds no code point of the list). */
export function escaped(text: string): string {
  return text.replace(HIDDEN, (c) => {
    const cp = c.codePointAt(0) as number;
    return cp > 0xffff ? `\\u{${hex(cp, 5)}}` : `\\u${hex(cp, 4)}`;
  });
}

/** JSON text (JSON.stringify's output) for a terminal: the same list as JSON escapes (\uXXXX, a pair above the BMP), so the document
 *  parses to the same values and none of its strings' hidden code points reaches the screen raw. */
export function escapedJson(json: string): string {
  // JSON.stringify escapes C0 controls inside strings, so a \n, \r or \t in its output is whitespace between tokens.
  return json.replace(HIDDEN, (c) => (c === '\n' || c === '\r' || c === '\t' ? c : c.length === 1 ? `\\u${hex(c.charCodeAt(0), 4)}` : `\\u${hex(c.charCodeAt(0), 4)}\\u${hex(c.charCodeAt(1), 4)}`));
}

/** A name or key inside a message, between double quotes: cut at `max` characters, in JSON string syntax (a
 *  quote or a backslash cannot end or fake the quoting), then escaped. */
export function printable(text: string, max = 64): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return escaped(JSON.stringify(cut).slice(1, -1));
}
