import { hash } from 'node:crypto';
import { canonicalBytes, type CanonicalMode } from '../protocol/json/canonical.js';
import type { JsonValue } from '../protocol/json/reader.js';

/** The tools.lock absent sentinel: the hashed field does not exist (or is JSON null where that means absent). */
export const ABSENT = 'absent';

/** "sha256:" + lowercase hex of the UTF-8 bytes of `text` (or of the bytes themselves). One-shot: a Hash
 *  object per digest cost twice as much on a listing's thousand small texts. */
export function tagged(text: string | Uint8Array): string {
  return 'sha256:' + hash('sha256', text, 'hex');
}

/** The tagged hash of a value's canonical form (hashed as bytes: the text is never made). */
export function hashOf(value: JsonValue, mode: CanonicalMode = 'jcs'): string {
  return tagged(canonicalBytes(value, { mode, inexact: false }));
}

/** The hash of a value, or the absent sentinel for undefined (and for null, where null means absent). */
export function hashOrAbsent(value: JsonValue | undefined, mode: CanonicalMode = 'jcs'): string {
  return value === undefined || value === null ? ABSENT : hashOf(value, mode);
}
