import path from 'node:path';
import * as v from 'valibot';
import { DEFAULT_LATENCY } from '../canary/baseline.js';
import { rulesSchema } from '../rules/schema.js';
import { sandboxSchema } from '../sandbox/schema.js';
import { WardenError } from '../error.js';
import { loadJsonFile } from './json-file.js';
import { objectRecord } from '../schema/own-record.js';
import { updateFile } from './update.js';
import { fleetSchema } from './fleet-config.js';
import type { HomePaths } from './paths.js';

export const DEFAULT_TRUSTED_PATH = '/usr/local/bin:/usr/bin:/bin';
/** Re-list a live session's tools after this many calls or seconds without a listing (docs/formats.md). */
export const DEFAULT_RELIST = { calls: 200, seconds: 300 };
/** A server id: safe as part of a file name (cache/digests.ID.json, cache/locks.ID.json), never "." or "..". */
export const SERVER_ID_PATTERN = '[A-Za-z0-9][A-Za-z0-9._-]{0,63}';
export const SERVER_ID_RE = new RegExp(`^${SERVER_ID_PATTERN}$`);
export const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

// Loader variables: names that make an interpreter or the dynamic loader load code, or change which code runs,
// from outside what the warden digested (the executable, the script, its package tree). A server may not be
// given one, neither as a value (`env`, `add --env NAME=VALUE`, an imported client entry's env) nor passed
// through (`passEnv`, `add --env NAME`): the warden would vouch for code it never saw. Refused:
//   node:    NODE_OPTIONS (--require, --import, --loader...), NODE_PATH (extra module search directories),
//            NODE_REPL_EXTERNAL_MODULE (a module run in place of the REPL), NODE_PRESERVE_SYMLINKS (resolves a
//            linked package's dependencies from the link's place, so other files load), NODE_COMPILE_CACHE (a
//            directory of V8 code cache: bytecode that is run in place of the source), ELECTRON_RUN_AS_NODE
//            (turns an Electron app into a node that runs its arguments as a script);
//            OPENSSL_CONF, OPENSSL_MODULES, OPENSSL_ENGINES (node and other OpenSSL users load the providers and
//            engines, shared libraries, that these name);
//   ld.so:   LD_* (LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH...: the whole family, it is ld.so's), DYLD_* (macOS),
//            GCONV_PATH (glibc loads iconv modules from it), GETCONF_DIR (getconf runs programs from it),
//            GLIBC_TUNABLES (glibc.cpu.hwcaps chooses which build of a library is loaded);
//   python:  PYTHONPATH, PYTHONHOME, PYTHONPLATLIBDIR, PYTHONUSERBASE (search paths; site-packages run .pth
//            files), PYTHONSTARTUP and PYTHONINSPECT (with INSPECT, python reads statements from stdin — the
//            JSON-RPC stream — after the script), PYTHONBREAKPOINT (imports a callable), PYTHONWARNINGS (a
//            category names a module to import), PYTHONPYCACHEPREFIX (bytecode read in place of the source);
//   others:  PERL5LIB, PERLLIB, PERL5OPT (-M), PERL5DB; RUBYOPT (-r), RUBYLIB, GEM_HOME, GEM_PATH,
//            RUBYGEMS_GEMDEPS (rubygems activates the gems a Gemfile names, and runs that Gemfile, at start);
//            LUA_INIT*, LUA_PATH*, LUA_CPATH*; PHPRC, PHP_INI_SCAN_DIR (auto_prepend_file); JAVA_TOOL_OPTIONS,
//            _JAVA_OPTIONS, JDK_JAVA_OPTIONS (-javaagent), CLASSPATH; DOTNET_STARTUP_HOOKS;
//   shells:  BASH_ENV and ENV (sourced at start), ZDOTDIR (zsh sources its .zshenv), SHELLOPTS and BASHOPTS with
//            PS4 (xtrace expands PS4, and $(...) in it runs). Exported bash functions (BASH_FUNC_name%%) cannot
//            be named here at all: '%' is not in ENV_NAME_RE.
// Not refused, because they carry data or tuning, not code: NODE_EXTRA_CA_CERTS (trust anchors; a concern of
// its own, not code), NODE_V8_COVERAGE and NODE_REDIRECT_WARNINGS (where files are written), NODE_DEBUG,
// NODE_DEBUG_NATIVE, NODE_ICU_DATA, UV_THREADPOOL_SIZE, MALLOC_* (glibc malloc tuning; MALLOC_TRACE writes a
// file), LOCPATH and NLSPATH (locale data and message catalogs), PYTHONUNBUFFERED, PYTHONIOENCODING, TZ...
// Variables read by the programs a server runs (GIT_SSH_COMMAND, EDITOR, PAGER) are out of reach: what a
// server executes is not attested either (docs/threat-model.md).
// Names are compared exactly, as Linux and macOS do: `node_options` is another variable, one that node never
// reads, so it is no loader variable (only Windows folds case, and the warden does not run there).
const LOADER_VARIABLES = new Set([
  'NODE_OPTIONS', 'NODE_PATH', 'NODE_REPL_EXTERNAL_MODULE', 'NODE_PRESERVE_SYMLINKS', 'NODE_COMPILE_CACHE', 'ELECTRON_RUN_AS_NODE',
  'OPENSSL_CONF', 'OPENSSL_MODULES', 'OPENSSL_ENGINES',
  'GCONV_PATH', 'GETCONF_DIR', 'GLIBC_TUNABLES',
  'PYTHONPATH', 'PYTHONHOME', 'PYTHONPLATLIBDIR', 'PYTHONUSERBASE', 'PYTHONSTARTUP', 'PYTHONINSPECT', 'PYTHONBREAKPOINT', 'PYTHONWARNINGS', 'PYTHONPYCACHEPREFIX',
  'PERL5LIB', 'PERLLIB', 'PERL5OPT', 'PERL5DB', 'RUBYOPT', 'RUBYLIB', 'GEM_HOME', 'GEM_PATH', 'RUBYGEMS_GEMDEPS',
  'PHPRC', 'PHP_INI_SCAN_DIR', 'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'CLASSPATH', 'DOTNET_STARTUP_HOOKS',
  'BASH_ENV', 'ENV', 'ZDOTDIR', 'SHELLOPTS', 'BASHOPTS', 'PS4',
]);
const LOADER_PREFIXES = ['LD_', 'DYLD_', 'LUA_INIT', 'LUA_PATH', 'LUA_CPATH'];

/** What `name` is, when it is a loader variable the warden refuses in a server's environment ("a loader
 *  variable: ..."), else undefined. */
export function loaderVariable(name: string): string | undefined {
  if (!LOADER_VARIABLES.has(name) && !LOADER_PREFIXES.some((p) => name.startsWith(p))) return undefined;
  return 'a loader variable: it would make the server load code the warden did not digest, or change what code runs';
}

const absolutePath = v.pipe(v.string(), v.check((p) => path.isAbsolute(p), 'expected an absolute path'));
export const envName = v.pipe(
  v.string(),
  v.regex(ENV_NAME_RE, 'expected an environment variable name'),
  v.check((name) => loaderVariable(name) === undefined, (issue) => `${String(issue.input)} is ${loaderVariable(String(issue.input))}; the warden refuses it (docs/formats.md lists them)`),
);

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
  arguments: v.optional(objectRecord(v.string(), v.unknown()), {}),
  normalize: v.optional(v.array(v.strictObject({ pattern: regexSource, flags: v.optional(v.pipe(v.string(), v.regex(/^[gimsuy]*$/, 'expected regular expression flags'))), replace: v.string() })), []),
});

/** A server installed into the sealed store by `install` (docs/formats.md). */
const installedPackageSchema = v.strictObject({
  name: v.pipe(v.string(), v.minLength(1)),
  version: v.pipe(v.string(), v.minLength(1)),
  integrity: v.pipe(v.string(), v.regex(/^sha512-[A-Za-z0-9+/]{86}==$/, 'expected a sha512 integrity (sha512-<base64>)')),
  /** The store entry's directory name under <home>/store/. */
  store: v.pipe(v.string(), v.regex(/^[^./][^/]*$/, 'expected a store entry name')),
});

/** The publisher pinned for an installed server: a later version must come from the same. */
export const pinnedIdentitySchema = v.strictObject({
  issuer: v.pipe(v.string(), v.url('expected the OIDC issuer URL')),
  repository: v.pipe(v.string(), v.url('expected the source repository URL')),
  workflow: v.pipe(v.string(), v.minLength(1, 'expected the workflow path')),
});

export const serverSchema = v.strictObject({
  command: v.pipe(v.string(), v.minLength(1, 'expected a command')),
  args: v.optional(v.array(v.string()), []),
  cwd: v.optional(absolutePath),
  env: v.optional(objectRecord(envName, v.string()), {}),
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
  package: v.optional(installedPackageSchema),
  /** required: every version must carry verified provenance from `identity`; preferred: admitted unsigned,
   *  pinned from the first version that has provenance; off: provenance is not asked for. */
  provenance: v.optional(v.picklist(['required', 'preferred', 'off'])),
  identity: v.optional(pinnedIdentitySchema),
  /** The operator's rules per tool (docs/formats.md "Operator rules"); none: the lock alone decides. */
  rules: v.optional(rulesSchema),
  /** What the server may read, write and reach (docs/guide.md "Confining a server"), or "unconfined"; none:
   *  launched as before. Pinned in warden.lock: a sandbox other than the pinned one refuses the launch. */
  sandbox: v.optional(sandboxSchema),
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
  servers: objectRecord(v.pipe(v.string(), v.regex(SERVER_ID_RE, 'expected a server id of letters, digits, ".", "_" or "-"')), serverSchema),
  /** Whether a root warden traces its confined sessions' denied writes with bpftrace (docs/adr/0066): "auto"
   *  (absent: when the host can), or "off" (its cost, ~0.3–0.5 µs on every system call of the host while a
   *  session is traced, is the host's to refuse without uninstalling bpftrace). Read from this file only. */
  writeTracing: v.optional(v.picklist(['auto', 'off'])),
  /** Where the daemon fetches signed trust bundles from (docs/formats.md "fleet"); absent: no fleet source. */
  fleet: v.optional(fleetSchema(envName, v.pipe(v.string(), v.regex(SERVER_ID_RE, 'expected a server id of letters, digits, ".", "_" or "-"')))),
});

export type ServerConfig = v.InferOutput<typeof serverSchema>;

/** A new server entry with every default filled in (what `add` writes). */
export function newServerConfig(input: v.InferInput<typeof serverSchema>): ServerConfig {
  return v.parse(serverSchema, input);
}
export type ServersFile = v.InferOutput<typeof serversFileSchema>;

/** Loads servers.json; a missing file is an empty configuration. */
export function loadServers(paths: HomePaths): ServersFile {
  return loadJsonFile(paths.servers, 'servers.json', serversFileSchema, true, false, true) ?? v.parse(serversFileSchema, { version: 1, servers: {} });
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

/** servers.json as the warden writes it. */
export function renderServers(file: ServersFile): string {
  return JSON.stringify(file, null, 2) + '\n';
}

/** A server's entry (or part of one) as JSON with object keys sorted: two entries are the same whatever order
 *  their file lists keys in. */
export function entryText(entry: unknown): string {
  return JSON.stringify(entry, (_k, v: unknown) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v));
}

/** Changes servers.json under its lock: read inside the lock, `apply` changes it in place, saved atomically if
 *  anything changed (store/update.ts). The only way servers.json is written. */
export function updateServers<R>(paths: HomePaths, apply: (file: ServersFile) => R | Promise<R>): Promise<R> {
  return updateFile(paths.servers, 'servers.json', () => loadServers(paths), renderServers, apply);
}
