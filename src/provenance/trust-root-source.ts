import { createHash, createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as v from 'valibot';
import { WardenError, errnoOf } from '../error.js';
import { JsonReadError, pointer, readJson, toPlain } from '../protocol/json/reader.js';
import { explainIssue } from '../schema/issues.js';
import { npmKeysSchema, openTrustRoot, trustedRootSchema, trustRootDataSchema, type TrustRootData } from './trust-root.js';

// Where a newer trust root comes from, for `trust-root update`: a file the operator brought (air-gapped), or
// sigstore's TUF repository (tuf-fetch.ts). Nothing is written here: the caller stores what this returns.

/** Largest file `--from` reads: today's trusted_root.json is ~7 KiB, keys.json ~1 KiB. */
export const MAX_TRUST_ROOT_FILE = 4 * 1024 * 1024;

const ADVICE =
  'Give a sigstore trusted_root.json, the npm registry keys.json, or a trust-root.json written by mcp-warden (docs/formats.md), then run the command again.';

/** What a `--from` file holds, told by its shape. */
export type TrustRootInputKind = 'trusted_root.json' | 'keys.json' | 'trust root';

export interface TrustRootInput {
  kind: TrustRootInputKind;
  /** The absolute path read. */
  file: string;
  /** sha256 of the file's bytes. */
  sha256: string;
  /** The file's value (checked against its schema; unknown fields kept as they were). */
  value: Record<string, unknown>;
}

function refuse(problem: string): never {
  throw new WardenError('TRUST_ROOT_INVALID', `${problem}; nothing was written. ${ADVICE}`);
}

/** Reads a `--from` file: bounded, lossless (duplicate keys refused), its shape recognized and checked. */
export function readTrustRootInput(fileArg: string): TrustRootInput {
  const file = path.resolve(fileArg);
  let bytes: Buffer;
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK); // a FIFO must not hang the command
    if (!fs.fstatSync(fd).isFile()) refuse(`${file} is not a regular file`);
    // Read at most one byte more than allowed, whatever the file's size says (it may grow while read).
    const buf = Buffer.alloc(MAX_TRUST_ROOT_FILE + 1);
    let len = 0;
    while (len < buf.length) {
      const n = fs.readSync(fd, buf, len, buf.length - len, null);
      if (n === 0) break;
      len += n;
    }
    if (len > MAX_TRUST_ROOT_FILE) refuse(`${file} is larger than ${MAX_TRUST_ROOT_FILE} bytes; a trust root is a few KiB`);
    bytes = buf.subarray(0, len);
  } catch (err) {
    if (err instanceof WardenError) throw err;
    throw new WardenError('FILE_UNREADABLE', `the trust root file ${file} cannot be read (${errnoOf(err) ?? String(err)}); nothing was written. Check the path and run the command again.`);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  let plain: unknown;
  try {
    plain = toPlain(readJson(bytes, { maxBytes: MAX_TRUST_ROOT_FILE, maxDepth: 64 }));
  } catch (err) {
    if (err instanceof JsonReadError) refuse(`${file} is not valid JSON (${err.message})`);
    throw err;
  }
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) refuse(`${file} holds no JSON object at /`);
  const value = plain as Record<string, unknown>;
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const has = (k: string): boolean => Object.hasOwn(value, k);
  if (has('trustedRoot') || has('npmKeys')) return { kind: 'trust root', file, sha256, value: checked(file, 'trust root', trustRootDataSchema, value, 'npmKeys') };
  if (has('keys')) return { kind: 'keys.json', file, sha256, value: checked(file, 'npm keys file', npmKeysSchema, value, 'top') };
  if (has('mediaType') || has('tlogs') || has('certificateAuthorities')) return { kind: 'trusted_root.json', file, sha256, value: checked(file, 'sigstore trusted root', trustedRootSchema, value, undefined) };
  return refuse(`${file} is neither a sigstore trusted_root.json (mediaType, tlogs, certificateAuthorities…), nor an npm keys.json ({"keys": […]}), nor a trust-root.json ({date, source, trustedRoot, npmKeys})`);
}

/**
 * Checks `value` against `schema`, naming the file and the JSON pointer of the first bad value. `keysAt` is where
 * the npm keys sit in it (the top, under npmKeys, or none): each must be a public key node can read, and one
 * must be for npm:attestations (else no npm attestation could ever verify).
 */
function checked(file: string, what: string, schema: v.GenericSchema, value: Record<string, unknown>, keysAt: 'top' | 'npmKeys' | undefined): Record<string, unknown> {
  const parsed = v.safeParse(schema, value);
  if (!parsed.success) {
    const { problem } = explainIssue(`the ${what} ${file}`, schema, parsed.issues[0]);
    refuse(problem);
  }
  if (keysAt !== undefined) {
    const keysFile = (keysAt === 'top' ? value : value.npmKeys) as v.InferOutput<typeof npmKeysSchema>;
    const base = keysAt === 'top' ? [] : ['npmKeys'];
    const forAttestations = keysFile.keys.filter((k) => k.keyUsage === 'npm:attestations');
    if (forAttestations.length === 0) refuse(`the ${what} ${file} has no key with keyUsage "npm:attestations" at ${pointer([...base, 'keys'])}`);
    keysFile.keys.forEach((k, i) => {
      try {
        createPublicKey({ key: Buffer.from(k.publicKey.rawBytes, 'base64'), format: 'der', type: 'spki' });
      } catch (err) {
        refuse(`the ${what} ${file} has a key node cannot read at ${pointer([...base, 'keys', i, 'publicKey', 'rawBytes'])} (${(err as Error).message})`);
      }
    });
  }
  return value;
}

/**
 * The trust root to store from a `--from` file, given the one in use (undefined: the home's is not valid, and
 * `invalid` says why): a trusted_root.json or a keys.json replaces its half and keeps the other; a whole trust
 * root replaces both and keeps its own date (when its material was taken). The date is `now` otherwise; the
 * source names the file and its sha256.
 */
export function trustRootFromInput(input: TrustRootInput, current: TrustRootData | undefined, now: Date, invalid?: WardenError): TrustRootData {
  const source = `file ${input.file} (sha256 ${input.sha256})`;
  const date = now.toISOString();
  if (!current && input.kind !== 'trust root') {
    throw new WardenError(
      invalid?.code ?? 'TRUST_ROOT_INVALID',
      `${invalid?.message ?? 'the trust root in use is not valid.'} A ${input.kind} would replace only half of it: replace the whole root instead (mcp-warden trust-root update, or --from a trust-root.json), or remove the home's trust-root.json; nothing was written.`,
    );
  }
  let data: TrustRootData;
  switch (input.kind) {
    case 'trusted_root.json':
      data = { date, source, trustedRoot: input.value as TrustRootData['trustedRoot'], npmKeys: (current as TrustRootData).npmKeys };
      break;
    case 'keys.json':
      data = { date, source, trustedRoot: (current as TrustRootData).trustedRoot, npmKeys: input.value as TrustRootData['npmKeys'] };
      break;
    case 'trust root': {
      const whole = input.value as TrustRootData;
      data = { date: whole.date, source: `${source}, taken from ${whole.source}`, trustedRoot: whole.trustedRoot, npmKeys: whole.npmKeys };
      break;
    }
  }
  openTrustRoot(data, `made from ${input.file}`); // builds the trust material: refused here, before anything is written
  return data;
}
