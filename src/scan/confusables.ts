import { confusablesTable } from './confusables-table.js';

// Unicode's confusables table as unhomoglyph 1.0.6 applies it (its data, the same mapping), without its way of
// applying it: unhomoglyph builds one regular expression of all 6,311 characters at import and V8 compiles it at
// the first call (proxy/ask.ts folds the warden's own name at import, so every `run` paid it). Every key of the
// table is one code point, so a regular expression of them matches exactly where a code point is a key, one at a
// time: looking each code point up is the same replacement (test/scan/confusables.test.ts checks it against
// unhomoglyph on every key and on mixed strings). The table stays the object JSON gives (a Map of it cost ~4 ms
// more to build), and scripts/bundle.mjs has the bundle parse it from a string rather than evaluate an object
// literal of 6,311 properties. Import on node 24, bundled: 11.3 -> ~5 ms of CPU (docs/adr/0056-launch-on-node-24.md);
// the bundle parses it at the first call (./confusables-table.ts).

/** What each ASCII character is replaced by (8 of them are keys: 0 1 ` " | I % m), looked up by code; built with
 *  the table, at the first call. */
let ascii: (string | undefined)[] | undefined;

function asciiOf(table: Record<string, string>): (string | undefined)[] {
  ascii ??= Array.from({ length: 128 }, (_, c) => {
    const ch = String.fromCharCode(c);
    return Object.hasOwn(table, ch) ? table[ch] : undefined;
  });
  return ascii;
}

/** `text` with every character of the confusables table replaced by what it imitates (unhomoglyph's result). Read
 *  by char code, ASCII from a small array (a 256 KiB question's forms are folded: review 24). */
export function unhomoglyph(text: string): string {
  const table = confusablesTable();
  const ASCII = asciiOf(table);
  let out = '';
  let from = 0; // start of the run of characters not yet copied
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    let to: string | undefined;
    let len = 1;
    if (c < 128) to = ASCII[c];
    else {
      len = (text.codePointAt(i) as number) > 0xffff ? 2 : 1;
      const ch = len === 1 ? text[i] as string : text.slice(i, i + 2);
      to = Object.hasOwn(table, ch) ? table[ch] : undefined;
    }
    if (to !== undefined) {
      out += text.slice(from, i) + to;
      from = i + len;
    }
    i += len;
  }
  return from === 0 ? text : out + text.slice(from);
}
