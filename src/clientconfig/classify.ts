import path from 'node:path';
import { refuseRegistryLaunchers } from '../attest/launchers.js';
import { refuseWrappers } from '../attest/wrappers.js';
import { WardenError, type WardenErrorCode } from '../error.js';
import { printable } from '../escape.js';
import { ENV_NAME_RE, loaderVariable } from '../store/servers.js';
import type { ClientEntry } from './read.js';
import { commandVariable } from './client-variables.js';
import { hostVariables } from './env-vars.js';
import { unknownMember } from './members.js';
import { protoMember } from './proto-member.js';
import { wardenEntry } from './warden-entry.js';
import { isWardenVariable } from './warden-env.js';

// What to do with one entry of a client configuration. Nothing here writes (warden-entry.ts reads real paths).

/** `env`: what stays in the client's entry (the server gets it through passEnv); `wardenEnv`: the variables
 *  the warden reads itself (warden-env.ts), which leave the entry for the server's servers.json `env`. */
export type EntryPlan =
  | { action: 'import'; command: string; args: string[]; cwd?: string; env: Record<string, string>; wardenEnv: Record<string, string> }
  | { action: 'npx'; pkg: string; args: string[]; env: Record<string, string>; wardenEnv: Record<string, string>; cwd?: string; refusal: string }
  | { action: 'wrapped'; id: string; home?: string }
  | { action: 'remote'; url: string }
  | { action: 'refused'; reason: string; code?: WardenErrorCode };

const REMOTE_TYPES = new Set(['http', 'sse', 'streamable-http', 'streamableHttp', 'ws']);
/** The keys by which one client or another reads an entry as a remote server (Windsurf: serverUrl, Gemini CLI:
 *  httpUrl), whatever their value. */
const URL_KEYS = ['url', 'serverUrl', 'httpUrl'];
/** The keys naming an entry's transport: "type", and Cline's legacy "transportType" (only in "mcpServers"
 *  files: members.ts), which its schema still reads (src/services/mcp/schemas.ts). */
const TYPE_KEYS = ['type', 'transportType'];

/** Local (a process the client starts), remote (a URL it connects to), or both at once: an entry with a command,
 *  or "type" (Cline's older name: "transportType") "stdio", is local whatever else it carries, so a URL key or a
 *  remote type beside it is ambiguous (one client launches it, another connects), and so is a stdio type with a
 *  URL and no command. Cline launches an entry with a command whatever its "transportType" says. */
function transportOf(o: Record<string, unknown>): { kind: 'local' | 'remote' } | { kind: 'ambiguous'; reason: string } {
  const typeKey = (test: (t: string) => boolean): string | undefined => TYPE_KEYS.find((k) => typeof o[k] === 'string' && test(o[k] as string));
  const stdioKey = typeKey((t) => t === 'stdio');
  const local = Object.hasOwn(o, 'command') || stdioKey !== undefined;
  const urlKey = URL_KEYS.find((k) => Object.hasOwn(o, k));
  const remoteKey = typeKey((t) => REMOTE_TYPES.has(t));
  if (local && (urlKey || remoteKey)) {
    const localBy = Object.hasOwn(o, 'command') ? 'a "command"' : `"${stdioKey}": "stdio"`;
    const remoteBy = urlKey ? `a "${urlKey}"` : `"${remoteKey}": ${JSON.stringify(o[remoteKey as string])}`;
    return { kind: 'ambiguous', reason: `it is both a local process (${localBy}) and a remote server (${remoteBy}): a client that goes by one starts it outside the warden, one that goes by the other connects. Keep only the command (a local server, which import then wraps) or only the URL (a remote one), then import again` };
  }
  return { kind: urlKey || remoteKey ? 'remote' : 'local' };
}
/** A member's value in a sentence (a string quoted, anything else as JSON), through the escaper. */
const shown = (v: unknown): string => (typeof v === 'string' ? `"${printable(v, 100)}"` : printable(JSON.stringify(v) ?? String(v), 100));
const NPX_FLAGS = new Set(['-y', '--yes', '-q', '--quiet', '--no-install']);

function npxPackage(args: string[]): { pkg: string; rest: string[] } | undefined {
  let i = 0;
  while (i < args.length && NPX_FLAGS.has(args[i] as string)) i++;
  const pkg = args[i];
  if (!pkg || pkg.startsWith('-')) return undefined; // -p/--package and other forms: not installed for the user
  return { pkg, rest: args.slice(i + 1) };
}

/** `wardenScript` and `node`: the warden running import, which an entry must be to count as already wrapped. */
export function classify(entry: ClientEntry, wardenScript: string, node: string = process.execPath): EntryPlan {
  const v = entry.value;
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { action: 'refused', reason: 'the entry is not an object' };
  const o = v as Record<string, unknown>;
  // Before anything reads a member: what a client builds from "__proto__" is not what is read here.
  const proto = protoMember(entry);
  if (proto) return { action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: proto };
  const transport = transportOf(o);
  if (transport.kind === 'ambiguous') return { action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: transport.reason };
  // An allow-list of members, before anything else: neither a remote entry nor one already launching the warden
  // is left as it is while it carries a member that may make the client run something (members.ts).
  const unknown = unknownMember(o, entry.kind, transport.kind, entry.file, entry.name);
  if (unknown) return { action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: unknown };
  // Nor one whose values make the client run a command as it resolves them (client-variables.ts).
  const runs = commandVariable(o, entry.inputs, entry.file, entry.name);
  if (runs) return { action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: runs };
  if (transport.kind === 'remote') {
    if (o.transportType !== undefined && !REMOTE_TYPES.has(o.transportType as string)) return { action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: `"transportType" ${shown(o.transportType)} on a remote entry is no transport import knows; write one of ${[...REMOTE_TYPES].join(', ')} (or remove it), then import again` };
    return { action: 'remote', url: typeof o.url === 'string' ? o.url : '' };
  }
  // A local entry's transportType is "stdio" or absent: a client that read another value as a remote transport
  // would not start the command import wraps.
  if (o.transportType !== undefined && o.transportType !== 'stdio') return { action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: `"transportType" ${shown(o.transportType)} on a local entry: Cline starts the command whatever the value, a client reading it as a transport would not; import accepts only "stdio" there. Write "stdio" (or remove it), then import again` };
  const warden = wardenEntry(o, { script: wardenScript, node });
  if (warden?.kind === 'launch') return { action: 'wrapped', id: warden.id, ...(warden.home !== undefined ? { home: warden.home } : {}) };
  if (warden) return { action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: warden.reason };
  if (o.type !== undefined && o.type !== 'stdio') return { action: 'refused', reason: `unknown transport type ${JSON.stringify(o.type)}` };
  if (typeof o.command !== 'string' || o.command === '') return { action: 'refused', reason: 'no "command"' };
  if (o.args !== undefined && (!Array.isArray(o.args) || o.args.some((a) => typeof a !== 'string'))) return { action: 'refused', reason: '"args" is not a list of strings' };
  if (o.envFile !== undefined) {
    return { action: 'refused', reason: '"envFile": the warden passes a server only the variables it knows by name; move them into "env" (the client still supplies the values), then import again' };
  }
  const env: Record<string, string> = {};
  const wardenEnv: Record<string, string> = {};
  if (o.env !== undefined) {
    if (!o.env || typeof o.env !== 'object' || Array.isArray(o.env)) return { action: 'refused', reason: '"env" is not an object' };
    for (const [k, val] of Object.entries(o.env)) {
      if (!ENV_NAME_RE.test(k)) return { action: 'refused', reason: `"env" names ${JSON.stringify(k)}, which is not an environment variable name` };
      const loader = loaderVariable(k);
      if (loader) return { action: 'refused', reason: `"env" sets ${k}, ${loader}; the warden refuses it. Remove it from the entry, then import again` };
      if (typeof val !== 'string') return { action: 'refused', reason: `"env" > "${k}" is not a string` };
      if (!isWardenVariable(k)) env[k] = val;
      else if (val.includes('${')) return { action: 'refused', reason: `"env" sets ${k} from a client variable (\${...}); the warden reads ${k} itself, so import moves it out of the entry and sets it for the server only, which needs its value now. Write the value, or remove ${k}, then import again` };
      else wardenEnv[k] = val;
    }
  }
  // Codex's env_vars: the client supplies the values from its own environment, as for `env` given as `${NAME}`
  // (so the enrolling launch leaves them to this process's environment, and passEnv lists them).
  const host = hostVariables(o.env_vars);
  if ('reason' in host) return { action: 'refused', reason: host.reason };
  for (const name of host.names) {
    if (Object.hasOwn(env, name) || Object.hasOwn(wardenEnv, name)) return { action: 'refused', reason: `${name} is both in "env" and in "env_vars": one value would be the client's choice, the other not read here. Keep one, then import again` };
    env[name] = `\${${name}}`;
  }
  let cwd: string | undefined;
  if (o.cwd !== undefined) {
    if (typeof o.cwd !== 'string' || o.cwd.includes('${')) return { action: 'refused', reason: '"cwd" is not a plain path (variables such as ${workspaceFolder} are resolved by the client at launch, not known here)' };
    if (!path.isAbsolute(o.cwd)) return { action: 'refused', reason: `"cwd" ${JSON.stringify(o.cwd)} is relative: the client resolves it against its own working directory, which the warden cannot know; make it absolute` };
    cwd = o.cwd;
  }
  const command = o.command;
  const args = (o.args as string[] | undefined) ?? [];
  if ([command, ...args].some((w) => w.includes('${'))) {
    return { action: 'refused', reason: 'its command line uses client variables (${...}), resolved by the client at launch time, so the warden cannot know what it runs' };
  }
  try {
    refuseRegistryLaunchers(entry.name, command, args);
    refuseWrappers(entry.name, command, args);
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    const npx = path.basename(command) === 'npx' ? npxPackage(args) : undefined;
    if (npx) return { action: 'npx', pkg: npx.pkg, args: npx.rest, env, wardenEnv, ...(cwd ? { cwd } : {}), refusal: err.message };
    return { action: 'refused', reason: err.message };
  }
  return { action: 'import', command, args, env, wardenEnv, ...(cwd ? { cwd } : {}) };
}
