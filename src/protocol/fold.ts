// Member names as a case-insensitive reader sees them. Go's encoding/json (and the Go MCP SDKs built on it)
// matches an object's member names to the names it expects without regard to case, under Unicode simple case
// folding, where "ſ" (U+017F) folds to "s" and the Kelvin sign "K" (U+212A) to "k"; cJSON also ignores case
// and C strings end at NUL. So `{"name":"a","NAME":"b"}` is one message to the warden and another to such a
// server: wherever the warden reads a member to decide, a differently spelled member of the same fold is a
// second reading it must refuse, not relay.

/** The folded form of a member name: cut at NUL, "ſ" as "s", then lower case (which takes "K" to "k"). */
export function foldName(name: string): string {
  const nul = name.indexOf('\u0000');
  const cut = nul < 0 ? name : name.slice(0, nul);
  return cut.replace(/\u017f/g, 's').toLowerCase();
}

/**
 * The first member of `keys` that a case-insensitive reader would take for one of `names` without being it
 * exactly, with the name it stands for; undefined when there is none. `names` must be folded already.
 */
export function caseVariant(keys: Iterable<string>, names: ReadonlySet<string>): { key: string; name: string } | undefined {
  for (const key of keys) {
    if (names.has(key)) continue;
    const folded = foldName(key);
    if (names.has(folded)) return { key, name: folded };
  }
  return undefined;
}
