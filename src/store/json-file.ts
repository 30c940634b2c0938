import fs from 'node:fs';
import type { z } from 'zod';
import { WardenError, errnoOf } from '../error.js';
import { JsonReadError, pointer, readJson, toPlain } from '../protocol/json/reader.js';
import { checkTrusted } from './perms.js';

const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

/** Where a schema complaint points, and what it says. */
function firstIssue(error: z.ZodError): { at: string; message: string } {
  const issue = error.issues[0];
  if (!issue) return { at: '/', message: 'invalid value' };
  return { at: pointer(issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))), message: issue.message };
}

/**
 * Loads a trusted JSON file: refuses it if another user can write it, if it is not JSON (duplicate keys
 * included), or if the schema rejects it, naming the file and the JSON pointer of the bad value.
 * Returns undefined when the file does not exist and `optional` is set.
 */
export function loadJsonFile<S extends z.ZodType>(
  file: string,
  label: string,
  schema: S,
  optional: boolean,
): z.infer<S> | undefined {
  checkTrusted(file, label, 'file');
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT' && optional) return undefined;
    const why = errnoOf(err) === 'ENOENT' ? 'does not exist' : `cannot be read (${errnoOf(err) ?? String(err)})`;
    throw new WardenError('FILE_UNREADABLE', `${label} at ${file} ${why}. Check the path, or run 'mcp-warden add' to create it.`);
  }
  if (bytes.byteLength > MAX_CONFIG_BYTES) {
    throw new WardenError('FILE_INVALID', `${label} at ${file} is larger than ${MAX_CONFIG_BYTES} bytes; the warden will not read it.`);
  }
  let plain: unknown;
  try {
    plain = toPlain(readJson(bytes, { maxBytes: MAX_CONFIG_BYTES, maxDepth: 64 }));
  } catch (err) {
    if (err instanceof JsonReadError) {
      throw new WardenError('FILE_NOT_JSON', `${label} at ${file} is not valid JSON: ${err.message}. Fix the file and run the command again.`);
    }
    throw err;
  }
  const parsed = schema.safeParse(plain);
  if (!parsed.success) {
    const { at, message } = firstIssue(parsed.error);
    throw new WardenError('FILE_INVALID', `${label} at ${file} is invalid at ${at}: ${message}. Fix that value and run the command again.`);
  }
  return parsed.data;
}
