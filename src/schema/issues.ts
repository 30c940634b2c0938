import type * as v from 'valibot';

// Schema complaints in plain words. A trust file (servers.json, allowlist.json, imports.json, warden.lock) that
// breaks its schema is refused with one sentence per the kind of problem: an unknown key, a missing key, a
// value of the wrong type (what was expected, what was found), a value that is not one of the allowed ones
// (which are), a value or key that does not match its pattern (the value, and what was expected); each with
// the file's name, the JSON pointer and what to do. valibot's own texts ("Invalid key: Expected never but
// received ...") are never shown; a schema's custom message ("expected 64 lowercase hex digits") is.

export interface IssueText {
  /** e.g. "unknown key 'rules' in servers.json at /servers/fx (did you mean 'rulez'?)" */
  problem: string;
  /** What to do, as a sentence. */
  advice: string;
}

type Issue = v.BaseIssue<unknown>;
type PathItem = NonNullable<Issue['path']>[number];
// valibot's schema objects, as far as they are walked here (entries, wrapped, item, value, options).
type AnySchema = { kind?: string; type: string; pipe?: AnySchema[]; entries?: Record<string, AnySchema>; wrapped?: AnySchema; item?: AnySchema; value?: AnySchema; options?: AnySchema[]; key?: string; literal?: unknown };

const FIX = 'Fix that value and run the command again.';
const LIBRARY_MESSAGE = /^Invalid [\w ]+: /;

/** RFC 6901 pointer of a list of keys (the same form as the JSON reader's). */
function pointerOf(keys: readonly (string | number)[]): string {
  if (keys.length === 0) return '/';
  return keys.map((k) => '/' + String(k).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

/** A value as it appears in JSON, cut short. */
function shown(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/** What was found, in words: "the string "x"", "the number 5", "a list", "an object", "null". */
function found(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the string ${shown(value)}`;
  if (typeof value === 'number') return `the number ${shown(value)}`;
  if (typeof value === 'boolean') return String(value);
  return 'an object';
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  Array: 'a list',
  Object: 'an object',
  null: 'null',
  undefined: 'nothing',
};

/** valibot's `expected` ("string", "Array", "(Object | null)") in words. */
function expectedWords(expected: string | null): string {
  if (!expected) return 'another type';
  const parts = expected.replace(/^\((.*)\)$/, '$1').split(' | ');
  return [...new Set(parts.map((p) => TYPE_WORDS[p] ?? p))].join(' or ');
}

/** The allowed values listed in valibot's `expected` of a picklist, variant or literal: ("a" | "b"). */
function allowedValues(expected: string | null): string {
  return (expected ?? '').replace(/^\((.*)\)$/, '$1').split(' | ').join(', ');
}

/** The sentence of a validation (a check on a value that has the right type). */
function validationDetail(issue: Issue): string {
  if (!LIBRARY_MESSAGE.test(issue.message)) return issue.message;
  const req = (issue as { requirement?: unknown }).requirement;
  switch (issue.type) {
    case 'integer':
      return 'expected a whole number';
    case 'min_value':
      return `expected at least ${String(req)}`;
    case 'max_value':
      return `expected at most ${String(req)}`;
    case 'min_length':
      return `expected at least ${String(req)} ${Array.isArray(issue.input) ? 'item(s)' : 'character(s)'}`;
    case 'max_length':
      return `expected at most ${String(req)} ${Array.isArray(issue.input) ? 'item(s)' : 'character(s)'}`;
    case 'regex':
      return `expected text matching ${String(req)}`;
    case 'url':
      return 'expected a URL';
    default:
      return `expected ${issue.message.replace(LIBRARY_MESSAGE, '').replace(/^Expected /, '')}`;
  }
}

/** The schema that shapes the value: through optional/nullable wrappers, and to the last schema of a pipe. */
function unwrap(s: AnySchema | undefined): AnySchema | undefined {
  let cur = s;
  for (;;) {
    if (cur && cur.wrapped && /optional|nullable|nullish/.test(cur.type)) cur = cur.wrapped;
    else if (cur?.pipe) {
      const last = cur.pipe.filter((p) => p.kind === 'schema').at(-1);
      if (!last || last === cur || last.type === cur.type) return cur;
      cur = last;
    } else return cur;
  }
}

/** The option of a variant schema that `value` selects by its discriminator key. */
function pickVariant(s: AnySchema, value: unknown): AnySchema | undefined {
  if (!value || typeof value !== 'object' || !s.key) return undefined;
  const tag = (value as Record<string, unknown>)[s.key];
  return s.options?.find((o) => unwrap(o.entries?.[s.key as string])?.literal === tag);
}

/** The keys an object schema allows at the object `items` lead to (`value` being that object), if known. */
function keysAt(schema: AnySchema, items: readonly PathItem[], value: unknown): string[] | undefined {
  let s = unwrap(schema);
  for (const item of items) {
    if (s?.type === 'variant') s = pickVariant(s, item.input);
    if (!s) return undefined;
    if (s.entries) s = unwrap(s.entries[String(item.key)]);
    else if (s.type === 'record') s = unwrap(s.value);
    else if (s.type === 'array') s = unwrap(s.item);
    else return undefined;
  }
  if (s?.type === 'variant') s = pickVariant(s, value);
  return s?.entries ? Object.keys(s.entries) : undefined;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] as number;
      row[j] = Math.min(cur + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length] as number;
}

/** The known key an unknown one most likely meant: the same but for case, or one or two edits away. */
function nearest(key: string, known: string[]): string | undefined {
  const lower = key.toLowerCase();
  const same = known.find((k) => k.toLowerCase() === lower);
  if (same) return same;
  if (key.length < 4) return undefined;
  const scored = known.map((k) => ({ k, d: distance(lower, k.toLowerCase()) })).filter((x) => x.d <= 2);
  scored.sort((a, b) => a.d - b.d);
  return scored[0]?.k;
}

/**
 * The first issue of a failed parse of `label` (e.g. "servers.json") against `schema`, in words. `schema` is
 * the one that was parsed: it is walked to suggest the key an unknown one most likely meant.
 */
export function explainIssue(label: string, schema: v.GenericSchema, issue: Issue | undefined): IssueText {
  if (!issue) return { problem: `an invalid value in ${label}`, advice: FIX };
  const items = issue.path ?? [];
  const keys = items.map((p) => p.key as string | number);
  const last = items.at(-1);

  if (last && last.origin === 'key') {
    const at = pointerOf(keys.slice(0, -1));
    const key = String(last.key);
    if (/object$/.test(issue.type) && issue.expected === 'never') {
      const known = keysAt(schema as unknown as AnySchema, items.slice(0, -1), last.input) ?? [];
      const guess = nearest(key, known);
      const hint = guess ? ` (did you mean '${guess}'?)` : known.length > 0 && known.length <= 12 ? ` (keys allowed there: ${known.join(', ')})` : '';
      return { problem: `unknown key '${key}' in ${label} at ${at}${hint}`, advice: 'Remove it, or upgrade mcp-warden if a newer version wrote it (docs/formats.md lists the keys of each file).' };
    }
    if (/object$/.test(issue.type)) {
      return { problem: `missing key '${key}' in ${label} at ${at}`, advice: 'Add it (docs/formats.md lists the keys of each file) and run the command again.' };
    }
    return { problem: `bad key ${shown(key)} in ${label} at ${at}: ${validationDetail(issue)}`, advice: 'Remove it or correct it, and run the command again.' };
  }

  const at = pointerOf(keys);
  if (issue.kind === 'schema' && issue.input === undefined && last) {
    // A variant's discriminator that is not there ({"url": ...} with no "type").
    return { problem: `missing key '${String(last.key)}' in ${label} at ${pointerOf(keys.slice(0, -1))}: expected ${expectedWords(issue.expected)}`, advice: 'Add it (docs/formats.md lists the keys of each file) and run the command again.' };
  }
  if (issue.kind !== 'schema') return { problem: `bad value ${shown(issue.input)} in ${label} at ${at}: ${validationDetail(issue)}`, advice: 'Remove it or correct it, and run the command again.' };
  if (issue.type === 'literal' && /(^|_)version$/.test(String(last?.key ?? ''))) {
    return {
      problem: `version ${shown(issue.input)} of ${label} is not supported (at ${at}): this mcp-warden reads version ${issue.expected}`,
      advice: 'Upgrade mcp-warden if a newer version wrote the file, or restore a file of the version it reads.',
    };
  }
  const typeMatches = (issue.type === 'picklist' || issue.type === 'variant' || issue.type === 'literal' || issue.type === 'enum') && (typeof issue.input === 'string' || typeof issue.input === 'number');
  if (typeMatches) return { problem: `value ${shown(issue.input)} is not allowed in ${label} at ${at}: use one of ${allowedValues(issue.expected)}`, advice: FIX };
  const expected = LIBRARY_MESSAGE.test(issue.message) ? `expected ${expectedWords(issue.expected)}` : issue.message;
  return { problem: `wrong type in ${label} at ${at}: ${expected}, found ${found(issue.input)}`, advice: FIX };
}

/** The issue worth explaining first: an unknown key rather than the missing one it most likely misspells. */
function firstWorth(issues: readonly Issue[]): Issue | undefined {
  const first = issues[0];
  const last = first?.path?.at(-1);
  if (!first || !last || last.origin !== 'key' || first.expected === 'never') return first;
  const parent = JSON.stringify((first.path ?? []).slice(0, -1).map((p) => p.key));
  return issues.find((i) => i.expected === 'never' && i.path?.at(-1)?.origin === 'key' && JSON.stringify((i.path ?? []).slice(0, -1).map((p) => p.key)) === parent) ?? first;
}

/** `explainIssue` of the issue of a failed parse that is worth explaining first. */
export function explainIssues(label: string, schema: v.GenericSchema, issues: readonly Issue[]): IssueText {
  return explainIssue(label, schema, firstWorth(issues));
}
