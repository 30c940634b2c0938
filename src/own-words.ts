// Text of the warden's own, for what it tells a client in its own name (proxy/refusal-text.ts, docs/adr/0052): a
// template whose interpolations can only be numbers, names from the warden's own list, or other such text. A
// string a server chose cannot be put in it: the type says so, and ownName returns the list's element, never its
// argument. Whatever quotes a server's text (a member, a tool name, an error message) is detail for the
// operator, and goes to stderr and the audit log through the one escaper instead.

declare const OWN: unique symbol;
/** A sentence built by `words` alone. */
export type OwnWords = string & { readonly [OWN]: true };

/** The methods the warden names in its own words. */
const NAMES = ['initialize', 'ping', 'tools/list', 'tools/call', 'prompts/list', 'prompts/get', 'resources/list', 'resources/read', 'resources/templates/list', 'completion/complete', 'server/discover'] as const;
export type OwnName = (typeof NAMES)[number];

/** The warden's own name equal to `s`, or undefined. */
export function ownName(s: string): OwnName | undefined {
  return NAMES.find((n) => n === s);
}

export function words(parts: TemplateStringsArray, ...values: (number | OwnName | OwnWords)[]): OwnWords {
  let out = parts[0] as string;
  for (let i = 0; i < values.length; i++) out += String(values[i]) + (parts[i + 1] as string);
  return out as OwnWords;
}
