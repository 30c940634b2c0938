import path from 'node:path';
import * as v from 'valibot';
import { DEFAULT_LATENCY } from '../canary/baseline.js';
import { WardenError } from '../error.js';
import { writeJsonAtomic } from './atomic.js';
import { loadJsonFile } from './json-file.js';
import type { HomePaths } from './paths.js';

export const DEFAULT_TRUSTED_PATH = '/usr/local/bin:/usr/bin:/bin';
/** Re-list a live session's tools after this many calls or seconds without a listing (docs/formats.md). */
export const DEFAULT_RELIST = { calls: 200, seconds: 300 };
export const SERVER_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

const absolutePath = v.pipe(v.string(), v.check((p) => path.isAbsolute(p), 'expected an absolute path'));
const envName = v.pipe(v.string(), v.regex(ENV_NAME_RE, 'expected an environment variable name'));

const trustedPath = v.pipe(
  v.string(),
  v.check(
    (p) => p.split(':').every((dir) => dir !== '' && path.isAbsolute(dir)),
    'every directory of the trusted path must be absolute (an empty or relative entry would search the current directory)',
  ),
);

const regexSource = v.pipe(
  v.string(),
  v.check((p) => {
    try {
      new RegExp(p);
      return true;
    } catch {
      return false;
    }
  }, 'expected a valid regular expression'),
);

const probeSchema = v.strictObject({
  name: v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'expected a canary name of letters, digits, ".", "_" or "-"')),
  tool: v.pipe(v.string(), v.minLength(1, 'expected a tool name')),
  arguments: v.optional(v.record(v.string(), v.unknown()), {}),
  normalize: v.optional(v.array(v.strictObject({ pattern: regexSource, flags: v.optional(v.pipe(v.string(), v.regex(/^[gimsuy]*$/, 'expected regular expression flags'))), replace: v.string() })), []),
});

const serverSchema = v.strictObject({
  command: v.pipe(v.string(), v.minLength(1, 'expected a command')),
  args: v.optional(v.array(v.string()), []),
  cwd: v.optional(absolutePath),
  env: v.optional(v.record(envName, v.string()), {}),
  passEnv: v.optional(v.array(envName), []),
  /** Files a node server loads from outside its package, recorded at enrollment (docs/formats.md). */
  modules: v.optional(v.array(absolutePath)),
  posture: v.optional(v.picklist(['enforce', 'monitor']), 'enforce'),
  canaries: v.optional(v.array(probeSchema), []),
  canaryLatency: v.optional(
    v.strictObject({
      factor: v.pipe(v.number(), v.minValue(1, 'expected at least 1')),
      slackMs: v.pipe(v.number(), v.minValue(0, 'expected at least 0')),
    }),
    () => ({ ...DEFAULT_LATENCY }),
  ),
  verifyEvery: v.optional(v.pipe(v.number(), v.minValue(0, 'expected seconds (0: never)')), 3600),
  relistEvery: v.optional(
    v.strictObject({
      calls: v.pipe(v.number(), v.integer(), v.minValue(1, 'expected at least 1')),
      seconds: v.pipe(v.number(), v.minValue(1, 'expected at least 1')),
    }),
    () => ({ ...DEFAULT_RELIST }),
  ),
});

const httpUrl = v.pipe(v.string(), v.url('expected a URL'), v.check((u) => /^https?:$/.test(new URL(u).protocol), 'expected an http or https URL'));

const sinkSchema = v.variant('type', [
  v.strictObject({ type: v.literal('stderr') }),
  v.strictObject({ type: v.literal('webhook'), url: httpUrl, timeoutMs: v.optional(v.pipe(v.number(), v.minValue(100)), 3000), retries: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10)), 2) }),
  v.strictObject({ type: v.literal('exec'), command: v.pipe(v.array(v.string()), v.minLength(1, 'expected a command'), v.check((c) => path.isAbsolute(c[0] ?? ''), 'the command must be an absolute path')), timeoutMs: v.optional(v.pipe(v.number(), v.minValue(100)), 5000) }),
  v.strictObject({ type: v.literal('journald'), socket: v.optional(absolutePath) }),
]);

export const serversFileSchema = v.strictObject({
  version: v.literal(1),
  path: v.optional(trustedPath, DEFAULT_TRUSTED_PATH),
  alerts: v.optional(v.array(sinkSchema), () => [{ type: 'stderr' as const }]),
  servers: v.record(v.pipe(v.string(), v.regex(SERVER_ID_RE, 'expected a server id of letters, digits, ".", "_" or "-"')), serverSchema),
});

export type ServerConfig = v.InferOutput<typeof serverSchema>;

/** A new server entry with every default filled in (what `add` writes). */
export function newServerConfig(input: v.InferInput<typeof serverSchema>): ServerConfig {
  return v.parse(serverSchema, input);
}
export type ServersFile = v.InferOutput<typeof serversFileSchema>;

/** Loads servers.json; a missing file is an empty configuration. */
export function loadServers(paths: HomePaths): ServersFile {
  return loadJsonFile(paths.servers, 'servers.json', serversFileSchema, true) ?? v.parse(serversFileSchema, { version: 1, servers: {} });
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
