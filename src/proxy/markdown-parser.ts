import MarkdownIt from 'markdown-it';

// markdown-it's constructor behind one function, so that scripts/bundle.mjs can give the bundle a module that
// loads the parser at its first use instead of at import: every `run` imports the name check, few sessions read a
// question or an error as Markdown, and importing markdown-it with `run`'s code cost ~6-9 ms of CPU at every launch
// (docs/adr/0067-markdown-reading.md). In the bundle the parser is its own file, dist/bundle/markdown-it.cjs, whose
// sha256 is written into the code that loads it and checked on the bytes it compiles (WARDEN_FILE_INVALID).

/** The parser's constructor. */
export function markdownIt(): typeof MarkdownIt {
  return MarkdownIt;
}
