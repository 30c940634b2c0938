import confusables from 'unhomoglyph/data.json' with { type: 'json' };

// unhomoglyph's confusables table behind one function, so that scripts/bundle.mjs can give the bundle a module
// that parses it at its first use instead of at import: a `run` whose session never folds a question or scans a
// name neither spends the parse (~5 ms of CPU at launch on node 24) nor keeps the table (~0.8 MB of heap for the
// whole session: its 6,311 properties and their strings, docs/adr/0069-run-memory-on-node-24.md). The data and
// its source are the same either way.

/** The table: each key one code point, its value the characters it imitates. */
export function confusablesTable(): Record<string, string> {
  return confusables as Record<string, string>;
}
