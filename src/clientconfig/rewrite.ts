import { applyEdits, findNodeAtLocation, getNodeValue, modify, parseTree, type FormattingOptions, type Node } from 'jsonc-parser';

// Editing a client configuration's text. `import` changes only the `command`, `args` and `cwd` of an entry
// (jsonc-parser's edits, which keep every other byte); `unwrap` puts each entry's original text back over the
// entry's whole byte range, which restores the file exactly.

export interface Splice {
  offset: number;
  length: number;
  text: string;
}

/** Applies non-overlapping splices (any order; of two at the same offset, the one given first is applied first). */
export function applySplices(text: string, splices: Splice[]): string {
  let out = text;
  for (const s of [...splices].sort((a, b) => b.offset - a.offset)) out = out.slice(0, s.offset) + s.text + out.slice(s.offset + s.length);
  return out;
}

/** The indentation one level uses in this text (two spaces when nothing is indented). */
function indentUnit(text: string): string {
  const m = /\n([ \t]+)\S/.exec(text);
  if (!m?.[1]) return '  ';
  return m[1].startsWith('\t') ? '\t' : ' '.repeat(Math.min(m[1].length, 8));
}

function formatting(text: string): FormattingOptions {
  const unit = indentUnit(text);
  return { insertSpaces: unit !== '\t', tabSize: unit === '\t' ? 4 : unit.length, eol: text.includes('\r\n') ? '\r\n' : '\n' };
}

function nodeAt(text: string, location: string[]): Node | undefined {
  const root = parseTree(text, [], { allowTrailingComma: true });
  return root ? findNodeAtLocation(root, location) : undefined;
}

/** Points the entry at `location` at the warden: its `command` and `args` replaced, its `cwd` removed (the warden
 *  starts the server in the directory servers.json names), the `env` members named in `dropEnv` removed (the
 *  variables the warden reads itself: servers.json sets them for the server), every other key and comment left
 *  where it was (the rest of env included: the client keeps supplying the values). An `args` list written on one
 *  line stays on one line. */
export function wrapEntryText(text: string, location: string[], command: string, args: string[], dropEnv: string[] = []): string {
  const options = { formattingOptions: formatting(text) };
  let out = applyEdits(text, modify(text, [...location, 'command'], command, options));
  const argsNode = nodeAt(out, [...location, 'args']);
  if (argsNode && !out.slice(argsNode.offset, argsNode.offset + argsNode.length).includes('\n')) {
    out = out.slice(0, argsNode.offset) + `[${args.map((a) => JSON.stringify(a)).join(', ')}]` + out.slice(argsNode.offset + argsNode.length);
  } else {
    out = applyEdits(out, modify(out, [...location, 'args'], args, options));
  }
  if (nodeAt(out, [...location, 'cwd'])) out = applyEdits(out, modify(out, [...location, 'cwd'], undefined, options));
  for (const name of dropEnv) out = applyEdits(out, modify(out, [...location, 'env', name], undefined, options));
  return out;
}

/** The value at `location` (after an edit). */
export function valueAt(text: string, location: string[]): unknown {
  const node = nodeAt(text, location);
  return node ? (getNodeValue(node) as unknown) : undefined;
}

/** Two JSON values are the same entry (key order and formatting aside). */
export function sameValue(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}
