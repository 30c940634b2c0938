import { JsonNumber, type JsonObject, type JsonValue } from '../protocol/json/reader.js';
import { caseVariant, foldedNames } from '../protocol/fold.js';

// completion/complete (review 26): the values a server suggests for a prompt's or a resource template's argument
// speak about that item, so a completion is relayed only for an item the session's read gate admits (its `ref`:
// `ref/prompt` by name, `ref/resource` by template or URI), refused otherwise like a refused prompts/get; and its
// answer reaches the client as the revision defines it (schema 2025-11-25 CompleteResult): `completion` with
// `values` (strings, at most 100, each bounded here), `total` (an integer) and `hasMore` (a boolean), nothing else.

/** Of a completion's values: the revision's own bound on how many, and the warden's on each one's length. */
export const MAX_COMPLETION_VALUES = 100;
export const MAX_COMPLETION_CHARS = 1024;

/** The members of a `ref` the warden decides on, each read by its fold: another spelling is refused. */
export const REF_MEMBERS = foldedNames(['type', 'name', 'uri']);

/** What a completion request completes: a prompt by name, or a resource (template) by URI; undefined when its
 *  `ref` is none of the revision's (a completion the warden cannot tie to an item is not relayed). */
export function completionRef(params: JsonValue | undefined): { kind: 'prompts' | 'resources'; item: string } | undefined {
  const ref = params instanceof Map ? params.get('ref') : undefined;
  if (!(ref instanceof Map) || caseVariant(ref.keys(), REF_MEMBERS)) return undefined;
  const type = ref.get('type');
  const item = ref.get(type === 'ref/prompt' ? 'name' : 'uri');
  if ((type !== 'ref/prompt' && type !== 'ref/resource') || typeof item !== 'string') return undefined;
  return { kind: type === 'ref/prompt' ? 'prompts' : 'resources', item };
}

/** A completion answer's `completion` as relayed: `values` when the revision's shape (else undefined: the answer
 *  is refused as unreadable), `total` and `hasMore` when theirs; every other member, or one of another type, is
 *  dropped and named in `dropped`. */
export function shapedCompletion(completion: JsonValue | undefined): { value: JsonObject; dropped: string[] } | undefined {
  if (!(completion instanceof Map)) return undefined;
  const values = completion.get('values');
  if (!Array.isArray(values) || values.length > MAX_COMPLETION_VALUES) return undefined;
  if (!values.every((v) => typeof v === 'string' && v.length <= MAX_COMPLETION_CHARS)) return undefined;
  const dropped: string[] = [];
  const value: JsonObject = new Map();
  for (const [k, v] of completion) {
    const kept = k === 'values' || (k === 'total' && v instanceof JsonNumber && /^\d{1,12}$/.test(v.lexeme)) || (k === 'hasMore' && typeof v === 'boolean');
    if (kept) value.set(k, v);
    else dropped.push(`completion.${k}`);
  }
  return { value, dropped };
}
