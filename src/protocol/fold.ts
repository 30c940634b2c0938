// Member names as a case-insensitive reader sees them: the one fold every comparison of member names without
// regard to case goes through (relay envelope, deciding params, hidden arguments, a retry's members, a served
// surface's sensitive members, a client configuration's members).
//
// Go's encoding/json (and the Go MCP SDKs built on it) matches an object's member names to the names it expects
// without regard to case, the last match winning: it folds each rune as unicode.ToUpper(unicode.ToLower(r))
// (encoding/json fold.go, appendFoldedName). Java's equalsIgnoreCase compares simple case mappings per character
// too, .NET's OrdinalIgnoreCase simple upper case (keeping "ı" apart: dotnet/runtime pal_casing.c); JavaScript's
// and Python's toUpperCase/upper() and Python's casefold() apply the full mappings; cJSON ignores ASCII case, and C strings end at NUL. So `{"name":"a","NAME":"b"}` is one
// message to the warden and another to such a peer: wherever the warden reads a member to decide, a differently
// spelled member of the same fold is a second reading it must refuse, not relay.
//
// The code points outside ASCII that one of those readers takes for ASCII letters, found by a scan of every code
// point's per-character round trips (lower, upper, upper of lower, lower of upper; test/protocol/fold.test.ts
// repeats it over every code point, so a letter missing here fails there):
//   simple case mappings (Go, Java; .NET's upper case takes "ſ" only): U+0130 "İ" → i, U+0131 "ı" → I,
//     U+017F "ſ" → S, U+212A "K" (Kelvin) → k;
//   full mappings only (JavaScript, Python, Java's String.toUpperCase, Ruby's casecmp?): U+00DF "ß" and U+1E9E
//     "ẞ" → SS, U+FB00 "ﬀ" → FF, U+FB01 "ﬁ" → FI, U+FB02 "ﬂ" → FL, U+FB03 "ﬃ" → FFI, U+FB04 "ﬄ" → FFL,
//     U+FB05 "ﬅ" and U+FB06 "ﬆ" → ST.
// ǰ, ẖ, ẗ, ẘ, ẙ (U+01F0, U+1E96–U+1E99) upper-case to an ASCII letter and a combining mark, ŉ and ẚ (U+0149,
// U+1E9A) to an ASCII letter and a modifier letter: no ASCII name is their fold, they are folded as any other
// code point. Every one of the list folds to its ASCII letters here; the fold is coarser than Go's where a full
// mapping is in it (a refusal more, never a reading less). Any other code point is folded as Go folds it, by its
// simple mappings (so "σ", "ς" and "Σ" are one), written in lower case where that is ASCII.

/** The code points outside ASCII that some reader ignoring case takes for ASCII letters, and those letters. */
const TO_ASCII: Readonly<Record<string, string>> = {
  '\u0130': 'i',
  '\u0131': 'i',
  '\u017f': 's',
  '\u212a': 'k',
  '\u00df': 'ss',
  '\u1e9e': 'ss',
  '\ufb00': 'ff',
  '\ufb01': 'fi',
  '\ufb02': 'fl',
  '\ufb03': 'ffi',
  '\ufb04': 'ffl',
  '\ufb05': 'st',
  '\ufb06': 'st',
};

/** The code points of TO_ASCII. */
export const FOLDED_TO_ASCII: readonly string[] = Object.keys(TO_ASCII);

// eslint-disable-next-line no-control-regex
const PLAIN = /^[\u0000-\u007f]*$/;

/** One code point's simple mapping one way, or the code point when JavaScript's (full) mapping is not one. */
function simple(c: string, mapped: string): string {
  const cp = mapped.codePointAt(0) as number;
  return mapped.length === (cp > 0xffff ? 2 : 1) ? mapped : c;
}

function foldCodePoint(c: string): string {
  const ascii = TO_ASCII[c];
  if (ascii !== undefined) return ascii;
  const lower = simple(c, c.toLowerCase());
  const upper = simple(lower, lower.toUpperCase());
  return upper < '\u0080' ? upper.toLowerCase() : upper;
}

/**
 * The folded form of a member name: cut at NUL, then each code point as the readers above fold it (the list
 * above to its ASCII letters, ASCII in lower case, any other by its simple upper case of its simple lower case).
 * Two names one of those readers takes for one another fold alike.
 */
export function foldName(name: string): string {
  const nul = name.indexOf('\u0000');
  const cut = nul < 0 ? name : name.slice(0, nul);
  if (PLAIN.test(cut)) return cut.toLowerCase();
  let out = '';
  for (const c of cut) out += foldCodePoint(c);
  return out;
}

// eslint-disable-next-line no-control-regex
const PLAIN_NO_NUL = /^[\u0001-\u007f]*$/;

/** Names the warden reads, each by its fold, for variantOf and caseVariant. */
export interface FoldedNames {
  readonly exact: ReadonlySet<string>;
  /** Each name by its fold. */
  readonly byFold: ReadonlyMap<string, string>;
  /** The lengths of the folds: an ASCII key without NUL folds to its own length, so one of another length is
   *  passed over without folding it. */
  readonly lengths: ReadonlySet<number>;
}

export function foldedNames(names: Iterable<string>): FoldedNames {
  const exact = new Set(names);
  const byFold = new Map([...exact].map((n) => [foldName(n), n] as const));
  return { exact, byFold, lengths: new Set([...byFold.keys()].map((f) => f.length)) };
}

/** The name of `names` that a case-insensitive reader would take `key` for, when `key` is not that name
 *  exactly; undefined when there is none. */
export function variantOf(key: string, names: FoldedNames): string | undefined {
  if (names.exact.has(key)) return undefined;
  if (!names.lengths.has(key.length) && PLAIN_NO_NUL.test(key)) return undefined;
  return names.byFold.get(foldName(key));
}

/** The first member of `keys` that a case-insensitive reader would take for one of `names` without being it
 *  exactly, with the name it stands for; undefined when there is none. */
export function caseVariant(keys: Iterable<string>, names: FoldedNames): { key: string; name: string } | undefined {
  for (const key of keys) {
    const name = variantOf(key, names);
    if (name !== undefined) return { key, name };
  }
  return undefined;
}

/** The first member of `keys` that folds like an earlier one, with that earlier one (`name`): a case-insensitive
 *  reader keeping the last takes the two for one; undefined when no two fold alike. */
export function foldsAlike(keys: Iterable<string>): { key: string; name: string } | undefined {
  const seen = new Map<string, string>();
  for (const key of keys) {
    const folded = foldName(key);
    const first = seen.get(folded);
    if (first !== undefined) return { key, name: first };
    seen.set(folded, key);
  }
  return undefined;
}
