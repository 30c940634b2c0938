// Where the statements of a TOML file are, by byte offset: table headers and key/value pairs, each with its full
// key path. smol-toml (toml-read.ts) says what the file means; this says where each value is written, so that
// `import` can replace the exact characters of a value and leave every other byte (comments, order, spacing) as
// it was. It reads only what it needs: strings (four kinds), comments and bracket depth. A misreading cannot
// reach the user's file: every edit is checked by parsing the result again (toml-rewrite.ts).

export interface TomlStatement {
  kind: 'header' | 'pair';
  /** Header: the table's path; pair: the table's path followed by the key's. */
  path: string[];
  /** An array-of-tables header (`[[...]]`), or a pair under one: its path is not a single table's. */
  inArray: boolean;
  /** The statement's line: from its first character to the end of its last line, newline included. */
  start: number;
  end: number;
  /** A pair's value, without the spaces and comment after it. */
  valueStart: number;
  valueEnd: number;
}

const BARE = /^[A-Za-z0-9_-]+$/;

/** A dotted key's parts, unquoted; undefined when it is not one this reader knows how to read. */
export function keyPath(raw: string): string[] | undefined {
  const out: string[] = [];
  let i = 0;
  const s = raw.trim();
  while (i <= s.length) {
    while (s[i] === ' ' || s[i] === '\t') i++;
    let part: string;
    if (s[i] === '"') {
      const close = findStringEnd(s, i, '"');
      if (close < 0) return undefined;
      try {
        part = JSON.parse(s.slice(i, close + 1)) as string; // TOML basic-string escapes are JSON's, plus \U and \e
      } catch {
        return undefined;
      }
      i = close + 1;
    } else if (s[i] === "'") {
      const close = s.indexOf("'", i + 1);
      if (close < 0) return undefined;
      part = s.slice(i + 1, close);
      i = close + 1;
    } else {
      const m = /^[A-Za-z0-9_-]+/.exec(s.slice(i));
      if (!m || !BARE.test(m[0])) return undefined;
      part = m[0];
      i += m[0].length;
    }
    out.push(part);
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (i >= s.length) return out;
    if (s[i] !== '.') return undefined;
    i++;
  }
  return out;
}

/** The index of the quote closing the basic string opened at `open` (backslash escapes), or -1. */
function findStringEnd(s: string, open: number, quote: string): number {
  for (let i = open + 1; i < s.length; i++) {
    if (s[i] === '\\' && quote === '"') i++;
    else if (s[i] === quote) return i;
    else if (s[i] === '\n') return -1;
  }
  return -1;
}

/** Where the string starting at `i` ends (the index after it), for all four kinds of TOML string. */
function skipString(text: string, i: number): number {
  const q = text[i] as string;
  if (text.startsWith(q.repeat(3), i)) {
    let j = i + 3;
    for (;;) {
      const k = text.indexOf(q.repeat(3), j);
      if (k < 0) return text.length;
      if (q === '"' && isEscaped(text, k)) {
        j = k + 1;
        continue;
      }
      let end = k + 3;
      while (text[end] === q && end < k + 5) end++; // up to two quotes of the content may precede the closing three
      return end;
    }
  }
  const close = findStringEnd(text, i, q);
  return close < 0 ? text.length : close + 1;
}

function isEscaped(text: string, at: number): boolean {
  let n = 0;
  for (let i = at - 1; text[i] === '\\'; i--) n++;
  return n % 2 === 1;
}

/** The end of the line at `i` (index after its newline, or the text's end). */
function lineEnd(text: string, i: number): number {
  const nl = text.indexOf('\n', i);
  return nl < 0 ? text.length : nl + 1;
}

/** Every header and key/value pair of `text`, in order; undefined when a line is not one this reader knows. */
export function scanToml(text: string): TomlStatement[] | undefined {
  const out: TomlStatement[] = [];
  let table: string[] = [];
  let inArray = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
      i++;
      continue;
    }
    if (c === '#') {
      i = lineEnd(text, i);
      continue;
    }
    const start = text.lastIndexOf('\n', i - 1) + 1;
    if (c === '[') {
      const array = text[i + 1] === '[';
      const open = i + (array ? 2 : 1);
      let j = open;
      while (j < text.length && text[j] !== ']' && text[j] !== '\n') j = text[j] === '"' || text[j] === "'" ? skipString(text, j) : j + 1;
      const path = keyPath(text.slice(open, j));
      if (!path || text[j] !== ']' || (array && text[j + 1] !== ']')) return undefined;
      table = path;
      inArray = array;
      const end = lineEnd(text, j);
      out.push({ kind: 'header', path, inArray, start, end, valueStart: end, valueEnd: end });
      i = end;
      continue;
    }
    // A pair: key, '=', value (to the end of its line at depth 0, outside strings).
    let j = i;
    while (j < text.length && text[j] !== '=' && text[j] !== '\n') j = text[j] === '"' || text[j] === "'" ? skipString(text, j) : j + 1;
    const key = keyPath(text.slice(i, j));
    if (!key || text[j] !== '=') return undefined;
    j++;
    while (text[j] === ' ' || text[j] === '\t') j++;
    const valueStart = j;
    let depth = 0;
    let valueEnd = j;
    while (j < text.length) {
      const d = text[j] as string;
      if (d === '"' || d === "'") {
        j = skipString(text, j);
        valueEnd = j;
      } else if (d === '#') {
        const nl = text.indexOf('\n', j); // a comment (inside an array too) runs to the end of its line
        j = nl < 0 ? text.length : nl;
      } else if (d === '\n') {
        if (depth === 0) break;
        j++;
      } else {
        if (d === '[' || d === '{') depth++;
        else if (d === ']' || d === '}') depth--;
        j++;
        if (d !== ' ' && d !== '\t' && d !== '\r') valueEnd = j;
      }
    }
    if (valueEnd === valueStart) return undefined;
    const end = lineEnd(text, j);
    out.push({ kind: 'pair', path: [...table, ...key], inArray, start, end, valueStart, valueEnd });
    i = end;
  }
  return out;
}
