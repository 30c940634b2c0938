// Whether a URI is one a resource template (RFC 6570) can expand to: the exact relation by which a
// resources/read through a template is admitted. Each expression is read as its operator's prefix (optional:
// an expression whose variables are all undefined expands to nothing) followed by any run of the characters
// its expansion can produce: unreserved characters and percent-escapes, the operator's separators, "=" where
// names or exploded pairs are written, and the reserved set for "+" and "#". So `tickets://{id}` matches
// `tickets://42` and not `tickets://4/2` (a "/" in a value is escaped as %2F); `{+path}` matches "a/b".
// The match is an automaton walk, linear in the URI for a bounded template (no backtracking a hostile
// template could make exponential; its cost is bounded by MAX_TEMPLATE x MAX_URI steps). A template that does
// not parse, is longer than MAX_TEMPLATE characters or has more than MAX_EXPRESSIONS expressions matches
// nothing, and so does a URI longer than MAX_URI characters.

const MAX_TEMPLATE = 512;
const MAX_EXPRESSIONS = 32;
const MAX_URI = 8192;

const UNRESERVED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%';
const RESERVED = ":/?#[]@!$&'()*+,;=";
const VARCHAR = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*(?::[1-9][0-9]{0,3}|\*)?$/;

type Token = { lit: string } | { prefix: string; chars: Set<string> };

/** The characters an expression with operator `op` can write after its prefix. */
function expansionChars(op: string, explode: boolean): Set<string> {
  let chars = UNRESERVED + ',';
  if (op === '+' || op === '#') chars += RESERVED;
  else if (op === ';' || op === '?' || op === '&') chars += `${op === ';' ? ';' : '&'}=`;
  else if (op === '.' || op === '/') chars += op + (explode ? '=' : '');
  else if (explode) chars += '=';
  return new Set(chars);
}

function parse(template: string): Token[] | undefined {
  if (template.length > MAX_TEMPLATE) return undefined;
  const tokens: Token[] = [];
  let expressions = 0;
  for (let i = 0; i < template.length; ) {
    const open = template.indexOf('{', i);
    const close = template.indexOf('}', i);
    if (close >= 0 && (open < 0 || close < open)) return undefined; // a "}" outside an expression
    if (open < 0) {
      for (const c of template.slice(i)) tokens.push({ lit: c });
      break;
    }
    for (const c of template.slice(i, open)) tokens.push({ lit: c });
    const end = template.indexOf('}', open);
    if (end < 0 || ++expressions > MAX_EXPRESSIONS) return undefined;
    let body = template.slice(open + 1, end);
    const first = body.charAt(0);
    const op = first !== '' && '+#./;?&'.includes(first) ? first : '';
    body = body.slice(op.length);
    const specs = body.split(',');
    if (!specs.every((s) => VARCHAR.test(s))) return undefined;
    const prefix = op === '+' ? '' : op;
    tokens.push({ prefix, chars: expansionChars(op, specs.some((s) => s.endsWith('*'))) });
    i = end + 1;
  }
  return tokens;
}

/** A test of URIs against one template (matches nothing when the template is not one the warden can read). */
export function uriTemplateMatcher(template: string): (uri: string) => boolean {
  const tokens = parse(template);
  if (!tokens) return () => false;
  return (uri) => matches(tokens, uri);
}

// States: 2i is "before token i", 2i+1 "inside expression i" (past its prefix); 2n is the end.
function matches(tokens: Token[], uri: string): boolean {
  if (uri.length > MAX_URI || /%(?![0-9A-Fa-f]{2})/.test(uri)) return false;
  const n = tokens.length;
  const close = (states: Set<number>): Set<number> => {
    // Epsilon moves: an expression may expand to nothing; an expression's run may end at any point.
    for (const s of states) {
      const i = s >> 1;
      if (i < n && 'chars' in (tokens[i] as Token)) states.add(2 * (i + 1));
    }
    return states;
  };
  let states = close(new Set([0]));
  for (const c of uri) {
    const next = new Set<number>();
    for (const s of states) {
      const i = s >> 1;
      if (i >= n) continue;
      const t = tokens[i] as Token;
      if ('lit' in t) {
        if (t.lit === c) next.add(2 * (i + 1));
      } else if (s % 2 === 1 || t.prefix === '') {
        if (t.chars.has(c)) next.add(2 * i + 1);
      } else if (t.prefix === c) next.add(2 * i + 1);
    }
    if (next.size === 0) return false;
    states = close(next);
  }
  return states.has(2 * n);
}
