// Re-indents canonical JSON text the way Go's encoding/json.Indent does with an empty prefix and two
// spaces (tools.lock SPEC §4.1): whitespace is inserted between tokens and nothing else changes.

export function indentCanonical(text: string): string {
  let out = '';
  let depth = 0;
  let inString = false;
  const newline = (): string => '\n' + '  '.repeat(depth);
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      out += c;
      if (c === '\\') {
        out += text[i + 1] ?? '';
        i++;
      } else if (c === '"') inString = false;
      continue;
    }
    switch (c) {
      case '"':
        inString = true;
        out += c;
        break;
      case '{':
      case '[': {
        const closer = c === '{' ? '}' : ']';
        if (text[i + 1] === closer) {
          out += c + closer;
          i++;
        } else {
          depth++;
          out += c + newline();
        }
        break;
      }
      case '}':
      case ']':
        depth--;
        out += newline() + c;
        break;
      case ',':
        out += c + newline();
        break;
      case ':':
        out += ': ';
        break;
      default:
        out += c;
    }
  }
  return out;
}
