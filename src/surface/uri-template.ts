// Whether a URI is one a resource template (RFC 6570) can expand to: the exact relation by which a
// resources/read through a template is admitted. Each expression is read as its operator's prefix (optional:
// an expression whose variables are all undefined expands to nothing) followed by any run of the characters
// its expansion can produce: unreserved characters and percent-escapes, the operator's separators, "=" where
// names or exploded pairs are written, and the reserved set for "+" and "#". So `tickets://{id}` matches
// `tickets://42` and not `tickets://4/2` (a "/" in a value is escaped as %2F); `{+path}` matches "a/b".
// The match is an automaton walk, linear in the URI for a bounded template (no backtracking a hostile
// template could make exponential; its cost is bounded by MAX_TEMPLATE x MAX_URI steps), and it counts its
// steps against the caller's budget (MatchBudget): a read walks many templates, and the walk as a whole is
// bounded by that budget, not by each template's bound (surface/read-admission.ts). A template that does
// not parse, is longer than MAX_TEMPLATE characters or has more than MAX_EXPRESSIONS expressions matches
// nothing, and so does a URI longer than MAX_URI characters.
// A template the listing refused is matched laxly (review 28): each expression, prefix included, as any run of
// characters, the widest reading any server may give it (the TS SDK's `[^/,]+` reads "a:b" as a {name}), so a
// URI a server may serve through the refused template is never admitted through a locked one.

const MAX_TEMPLATE = 512;
const MAX_EXPRESSIONS = 32;
const MAX_URI = 8192;
/** The steps one read may spend matching its URI against every template it walks (docs/threat-model.md,
 *  review 26: about 20 ms of node 24's CPU spent whole, 50 ms cold; an honest read, a handful of templates of a few
 *  states and a URI of a few hundred characters, spends a few thousand). */
export const READ_MATCH_STEPS = 500_000;

const UNRESERVED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%';
const RESERVED = ":/?#[]@!$&'()*+,;=";
const VARCHAR = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*(?::[1-9][0-9]{0,3}|\*)?$/;

type Token = { lit: string } | { prefix: string; chars: Set<string> | 'any' };

/** The characters an expression with operator `op` can write after its prefix (one set per operator and
 *  explode, shared by every template: a listing's templates build no set each). */
const EXPANSION_CHARS = new Map<string, Set<string>>();
function expansionChars(op: string, explode: boolean): Set<string> {
  const key = op + (explode ? '*' : '');
  const known = EXPANSION_CHARS.get(key);
  if (known) return known;
  let chars = UNRESERVED + ',';
  if (op === '+' || op === '#') chars += RESERVED;
  else if (op === ';' || op === '?' || op === '&') chars += `${op === ';' ? ';' : '&'}=`;
  else if (op === '.' || op === '/') chars += op + (explode ? '=' : '');
  else if (explode) chars += '=';
  const set = new Set(chars);
  EXPANSION_CHARS.set(key, set);
  return set;
}

function parse(template: string, lax: boolean): Token[] | undefined {
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
    tokens.push(lax ? { prefix: '', chars: 'any' } : { prefix, chars: expansionChars(op, specs.some((s) => s.endsWith('*'))) });
    i = end + 1;
  }
  return tokens;
}

/** What one read may spend on template matching: state steps (one per state per URI character), shared by
 *  every template the read walks. */
export interface MatchBudget {
  steps: number;
}

/** A test of URIs against one template: true or false, or 'over' when the budget ran out before it was decided
 *  (matches nothing when the template is not one the warden can read). */
export type UriMatcher = (uri: string, budget: MatchBudget) => boolean | 'over';

/** A test of URIs against one template (matches nothing when the template is not one the warden can read); `lax`
 *  reads each expression as any run of characters (a refused template: the widest reading). */
export function uriTemplateMatcher(template: string, lax = false): UriMatcher {
  const tokens = parse(template, lax);
  if (!tokens) return () => false;
  return (uri, budget) => matches(tokens, uri, budget);
}

/** Whether a URI is one no template can match whatever it is: over MAX_URI, or a "%" not starting an escape. */
export function unmatchableUri(uri: string): boolean {
  return uri.length > MAX_URI || /%(?![0-9A-Fa-f]{2})/.test(uri);
}

// States: 2i is "before token i", 2i+1 "inside expression i" (past its prefix); 2n is the end. The state sets
// are arrays deduplicated by a stamp per state (no Set per character).
function matches(tokens: Token[], uri: string, budget: MatchBudget): boolean | 'over' {
  if (unmatchableUri(uri)) return false;
  const n = tokens.length;
  const stamp = new Uint32Array(2 * n + 1);
  let generation = 1;
  const add = (states: number[], s: number): void => {
    if (stamp[s] === generation) return;
    stamp[s] = generation;
    states.push(s);
    // Epsilon moves: an expression may expand to nothing; an expression's run may end at any point.
    const i = s >> 1;
    if (i < n && 'chars' in (tokens[i] as Token)) add(states, 2 * (i + 1));
  };
  let states: number[] = [];
  add(states, 0);
  for (const c of uri) {
    budget.steps -= states.length + 1;
    if (budget.steps < 0) return 'over';
    generation++;
    const next: number[] = [];
    for (const s of states) {
      const i = s >> 1;
      if (i >= n) continue;
      const t = tokens[i] as Token;
      if ('lit' in t) {
        if (t.lit === c) add(next, 2 * (i + 1));
      } else if (s % 2 === 1 || t.prefix === '') {
        if (t.chars === 'any' || t.chars.has(c)) add(next, 2 * i + 1);
      } else if (t.prefix === c) add(next, 2 * i + 1);
    }
    if (next.length === 0) return false;
    states = next;
  }
  return states.includes(2 * n);
}
