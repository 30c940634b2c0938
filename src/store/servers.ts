import path from 'node:path';
import * as v from 'valibot';
import { WardenError } from '../error.js';
import { writeJsonAtomic } from './atomic.js';
import { loadJsonFile } from './json-file.js';
import type { HomePaths } from './paths.js';

export const DEFAULT_TRUSTED_PATH = '/usr/local/bin:/usr/bin:/bin';
/** Re-list a live session's tools after this many calls or seconds without a listing (docs/formats.md). */
export const DEFAULT_RELIST = { calls: 200, seconds: 300 };
export const SERVER_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

const absolutePath = v.pipe(v.string(), v.check((p) => path.isAbsolute(p), 'expected an absolute path'));
const envName = v.pipe(v.string(), v.regex(ENV_NAME_RE, 'expected an environment variable name'));

const trustedPath = v.pipe(
  v.string(),
  v.check(
    (p) => p.split(':').every((dir) => dir !== '' && path.isAbsolute(dir)),
    'every directory of the trusted path must be absolute (an empty or relative entry would search the current directory)',
  ),
);

const serverSchema = v.strictObject({
  command: v.pipe(v.string(), v.minLength(1, 'expected a command')),
  args: v.optional(v.array(v.string()), []),
  cwd: v.optional(absolutePath),
  env: v.optional(v.record(envName, v.string()), {}),
  passEnv: v.optional(v.array(envName), []),
  posture: v.optional(v.picklist(['enforce', 'monitor']), 'enforce'),
  canaries: v.optional(v.array(v.unknown()), []),
  relistEvery: v.optional(
    v.strictObject({
      calls: v.pipe(v.number(), v.integer(), v.minValue(1, 'expected at least 1')),
      seconds: v.pipe(v.number(), v.minValue(1, 'expected at least 1')),
    }),
    () => ({ ...DEFAULT_RELIST }),
  ),
});

export const serversFileSchema = v.strictObject({
  version: v.literal(1),
  path: v.optional(trustedPath, DEFAULT_TRUSTED_PATH),
  alerts: v.optional(v.array(v.unknown()), []),
  servers: v.record(v.pipe(v.string(), v.regex(SERVER_ID_RE, 'expected a server id of letters, digits, ".", "_" or "-"')), serverSchema),
});

export type ServerConfig = v.InferOutput<typeof serverSchema>;
export type ServersFile = v.InferOutput<typeof serversFileSchema>;

/** Loads servers.json; a missing file is an empty configuration. */
export function loadServers(paths: HomePaths): ServersFile {
  return (
    loadJsonFile(paths.servers, 'servers.json', serversFileSchema, true) ?? {
      version: 1,
      path: DEFAULT_TRUSTED_PATH,
      alerts: [],
      servers: {},
    }
  );
}

/** The configuration of one server, or a refusal naming the ids that exist. */
export function serverById(file: ServersFile, id: string, paths: HomePaths): ServerConfig {
  const server = Object.hasOwn(file.servers, id) ? file.servers[id] : undefined;
  if (!server) {
    const known = Object.keys(file.servers);
    throw new WardenError(
      'SERVER_UNKNOWN',
      `no server '${id}' in ${paths.servers}${known.length ? ` (configured: ${known.join(', ')})` : ''}. Add it with: mcp-warden add ${id} -- <command> [args...]`,
    );
  }
  return server;
}

export function saveServers(paths: HomePaths, file: ServersFile): void {
  writeJsonAtomic(paths.servers, file);
}
