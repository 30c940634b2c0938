import { JsonNumber, type JsonValue } from './reader.js';

/**
 * Serializes a lossless value compactly, keeping member order and number lexemes as they arrived. Used only
 * for a message the warden changes (a filtered tools/list result); everything else is forwarded as its bytes.
 */
export function serialize(value: JsonValue): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return JSON.stringify(value);
  if (value instanceof JsonNumber) return value.lexeme;
  if (Array.isArray(value)) return `[${value.map(serialize).join(',')}]`;
  return `{${[...value].map(([k, v]) => `${JSON.stringify(k)}:${serialize(v)}`).join(',')}}`;
}
