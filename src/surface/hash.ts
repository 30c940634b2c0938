import { createHash } from 'node:crypto';
import { canonicalize, type CanonicalMode } from '../protocol/json/canonical.js';
import type { JsonValue } from '../protocol/json/reader.js';

/** The tools.lock absent sentinel: the hashed field does not exist (or is JSON null where that means absent). */
export const ABSENT = 'absent';

/** "sha256:" + lowercase hex of the UTF-8 bytes of `text`. */
export function tagged(text: string): string {
  return 'sha256:' + createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The tagged hash of a value's canonical form. */
export function hashOf(value: JsonValue, mode: CanonicalMode = 'jcs'): string {
  return tagged(canonicalize(value, mode));
}

/** The hash of a value, or the absent sentinel for undefined (and for null, where null means absent). */
export function hashOrAbsent(value: JsonValue | undefined, mode: CanonicalMode = 'jcs'): string {
  return value === undefined || value === null ? ABSENT : hashOf(value, mode);
}
