import fs from 'node:fs';
import * as v from 'valibot';
import { WardenError, errnoOf } from '../error.js';
import { JsonNumber, JsonReadError, pointer, readJson, toPlain, type JsonValue } from '../protocol/json/reader.js';
import { es6, inexactText } from '../protocol/json/number.js';
import { explainIssues } from '../schema/issues.js';
import { checkTrusted } from './perms.js';

const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

type Schema = v.GenericSchema;

/**
 * Loads a trusted JSON file: refuses it if another user can write it, if it is not JSON (duplicate keys
 * included), or if the schema rejects it, naming the file and the JSON pointer of the bad value.
 * Returns undefined when the file does not exist and `optional` is set.
 */
export function loadJsonFile<S extends Schema>(
  file: string,
  label: string,
  schema: S,
  optional: boolean,
  /** The warden's own machine-written caches skip the duplicate-key check for speed (JSON.parse). */
  fast = false,
  /** Refuse a number that a double does not hold as written (servers.json: a fixed value reaches a server). */
  exactNumbers = false,
): v.InferOutput<S> | undefined {
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
    if (fast) plain = JSON.parse(bytes.toString('utf8'));
    else {
      const value = readJson(bytes, { maxBytes: MAX_CONFIG_BYTES, maxDepth: 64 });
      const inexact = exactNumbers ? inexactNumber(value) : undefined;
      if (inexact) throw new WardenError('FILE_INVALID', `${label} at ${file} has a number a double cannot hold as written, at ${inexact.at} (${inexact.lexeme.slice(0, 40)}): the warden would use another value. Write it with at most 15 significant digits, or as a string if the program it is for reads one.`);
      plain = toPlain(value);
    }
  } catch (err) {
    if (err instanceof SyntaxError) {
      throw new WardenError('FILE_NOT_JSON', `${label} at ${file} is not valid JSON: ${err.message}. Fix or delete the file and run the command again.`);
    }
    if (err instanceof JsonReadError) {
      throw new WardenError('FILE_NOT_JSON', `${label} at ${file} is not valid JSON: ${err.message}. Fix the file and run the command again.`);
    }
    throw err;
  }
  const parsed = v.safeParse(schema, plain);
  if (!parsed.success) {
    const { problem, advice } = explainIssues(label, schema, parsed.issues);
    throw new WardenError('FILE_INVALID', `${problem}. File: ${file}. ${advice}`);
  }
  return parsed.output;
}

/** The first number (with its JSON pointer) whose double is not the decimal written, or out of range. */
export function inexactNumber(value: JsonValue, at: string[] = []): { at: string; lexeme: string } | undefined {
  if (value instanceof JsonNumber) {
    let js: string;
    try {
      js = es6(value.lexeme);
    } catch {
      return { at: pointer(at), lexeme: value.lexeme };
    }
    return inexactText(value.lexeme, js) === undefined ? undefined : { at: pointer(at), lexeme: value.lexeme };
  }
  const members: [string, JsonValue][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : value instanceof Map ? [...value] : [];
  for (const [k, v] of members) {
    at.push(k);
    const r = inexactNumber(v, at);
    at.pop();
    if (r) return r;
  }
  return undefined;
}
