import { printable } from '../escape.js';
import { CLIENT_LABELS, type ClientKind } from './read.js';

// Which members an entry of a client configuration may carry for `import` to handle it: an allow-list per
// format and per transport. `import` rewrites only `command`, `args`, `cwd` (and moves some of `env`); every other
// member stays in the entry and keeps its meaning for the client. A member the warden does not know may change
// what the client runs or how it starts it (VS Code's `dev` starts the command under a debugger, Claude Code's
// `headersHelper` runs a shell command at each connection), so an entry carrying one is refused, whatever it is
// (to be wrapped, already wrapped, or remote), and left for the user. The lists hold the members classify.ts
// reads and those that only label the entry or set what the client does with the server it talks to (a
// timeout, approvals, tool filters, HTTP headers, an OAuth client id): none starts a program or changes a launch.
// Sources: each client's documentation of its file (Claude Desktop, Claude Code, Cursor, VS Code's
// mcpPlatformTypes.ts), and for "mcpServers" files of other clients Windsurf, Cline, Roo Code and Gemini CLI.

/** Read by classify.ts itself (`envFile` to refuse it with its own sentence). */
const LOCAL_READ = ['command', 'args', 'env', 'cwd', 'type', 'envFile'];
const REMOTE_READ = ['type', 'url', 'serverUrl', 'httpUrl'];

/** Client-side settings of the "mcpServers" files of other clients (Windsurf, Cline, Roo Code, Gemini CLI).
 *  `transportType`: Cline's older name for "type" (cline src/services/mcp/schemas.ts), read by classify.ts and
 *  held to "stdio" on a local entry (Cline launches any entry with a command, whatever its value) and to a remote
 *  type on a remote one. `watchPaths`: Roo Code watches those paths and, on a change, restarts the entry's
 *  connection with the same command (McpHub.ts setupFileWatcher -> restartConnection), which after import is the
 *  warden's launch, attested again at each start: it decides when the same launch happens, never what runs. */
const GENERIC = ['disabled', 'timeout', 'description', 'autoApprove', 'alwaysAllow', 'disabledTools', 'includeTools', 'excludeTools', 'trust', 'transportType', 'watchPaths'];
/** Remote only: Gemini CLI's ways to sign in (a credential kind, an audience; no command). */
const GENERIC_REMOTE = ['headers', 'oauth', 'authProviderType', 'targetAudience', 'targetServiceAccount'];

/** Codex CLI (codex-rs config/src/mcp_types.rs RawMcpServerConfig): switches, timeouts, tool filters and
 *  approvals, a display name; `env_vars` is read by classify.ts (env-vars.ts). Not here: `environment_id` and
 *  `http_headers_helper` (WHY). */
const CODEX = ['enabled', 'required', 'startup_timeout_sec', 'startup_timeout_ms', 'tool_timeout_sec', 'enabled_tools', 'disabled_tools', 'supports_parallel_tool_calls', 'default_tools_approval_mode', 'tools', 'omit_tools_from', 'name'];

const KNOWN: Record<ClientKind, { local: string[]; remote: string[] }> = {
  'claude-desktop': { local: [], remote: ['headers'] },
  // Claude Code: `oauth` holds a client id, a callback port, a metadata URL, scopes.
  'claude-code': { local: [], remote: ['headers', 'oauth'] },
  'claude-code-user': { local: [], remote: ['headers', 'oauth'] },
  // Cursor: `auth` holds an OAuth client id, secret and scopes.
  cursor: { local: [], remote: ['headers', 'auth'] },
  // VS Code: `version` and `gallery` say where an entry installed from its gallery came from.
  vscode: { local: ['version', 'gallery'], remote: ['headers', 'oauth', 'version', 'gallery'] },
  'mcp-servers': { local: GENERIC, remote: [...GENERIC, ...GENERIC_REMOTE] },
  codex: { local: ['env_vars', ...CODEX], remote: [...CODEX, 'bearer_token', 'bearer_token_env_var', 'http_headers', 'env_http_headers', 'auth', 'scopes', 'oauth', 'oauth_resource'] },
};

/** What some members the warden does not keep make a client do. */
const WHY: Record<string, string> = {
  dev: 'VS Code starts the command under a debugger with "dev.debug" (node --inspect-brk, where any local process that connects first runs code in it) and restarts it on file changes with "dev.watch"',
  headersHelper: 'Claude Code runs it as a shell command on this machine at each connection, outside the warden',
  sandboxEnabled: 'VS Code starts the command inside a sandbox program of its own and approves its tools without asking',
  http_headers_helper: 'Codex runs it as a command on this machine to make the HTTP headers of each connection, outside the warden',
  experimental_environment: 'Codex starts the server through a remote executor environment, not on this machine as import reads it',
  environment_id: 'Codex starts the server in the environment it names (another executor), not on this machine as import reads it',
  sandbox: 'VS Code starts the command inside a sandbox program of its own and approves its tools without asking',
};

/** The sentence refusing the first member of `o` not allowed for a `transport` entry of a `kind` file, or
 *  undefined when every member is allowed. */
export function unknownMember(o: Record<string, unknown>, kind: ClientKind, transport: 'local' | 'remote', file: string, entry: string): string | undefined {
  const allowed = new Set([...(transport === 'local' ? LOCAL_READ : REMOTE_READ), ...KNOWN[kind][transport]]);
  const member = Object.keys(o).find((k) => !allowed.has(k));
  if (member === undefined) return undefined;
  const name = printable(member);
  const why = Object.hasOwn(WHY, member) ? WHY[member] : 'import does not know what the client does with it, which may be to run a program or to change how it starts one';
  const kept = transport === 'local' ? 'Kept in an entry that import wraps (or counts as already launched through the warden), it would still act on the warden\'s launch' : 'Reported as a remote server and left alone, the entry would still make the client act on it';
  return `the entry "${printable(entry)}" of ${file} carries "${name}": ${why}. ${kept}, so the entry is refused and left as it is. A ${transport} entry of ${CLIENT_LABELS[kind]} may carry only ${[...allowed].sort().join(', ')}: remove "${name}" from the entry, then import again`;
}
