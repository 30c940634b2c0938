import path from 'node:path';
import { z } from 'zod';
import { WardenError } from '../error.js';
import { writeJsonAtomic } from './atomic.js';
import { loadJsonFile } from './json-file.js';
import type { HomePaths } from './paths.js';

export const DEFAULT_TRUSTED_PATH = '/usr/local/bin:/usr/bin:/bin';
export const SERVER_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

const absolutePath = z.string().refine((p) => path.isAbsolute(p), 'expected an absolute path');

const trustedPath = z
  .string()
  .refine(
    (p) => p.split(':').every((dir) => dir !== '' && path.isAbsolute(dir)),
    'every directory of the trusted path must be absolute (an empty or relative entry would search the current directory)',
  );

const serverSchema = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  cwd: absolutePath.optional(),
  env: z.record(z.string().regex(ENV_NAME_RE, 'expected an environment variable name'), z.string()).default({}),
  passEnv: z.array(z.string().regex(ENV_NAME_RE, 'expected an environment variable name')).default([]),
  posture: z.enum(['enforce', 'monitor']).default('enforce'),
  canaries: z.array(z.unknown()).default([]),
});

export const serversFileSchema = z.strictObject({
  version: z.literal(1),
  path: trustedPath.default(DEFAULT_TRUSTED_PATH),
  alerts: z.array(z.unknown()).default([]),
  servers: z.record(z.string().regex(SERVER_ID_RE, 'expected a server id of letters, digits, ".", "_" or "-"'), serverSchema),
});

export type ServerConfig = z.infer<typeof serverSchema>;
export type ServersFile = z.infer<typeof serversFileSchema>;

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
