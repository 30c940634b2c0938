import { printable } from '../escape.js';
import { ENV_NAME_RE, loaderVariable } from '../store/servers.js';
import { isWardenVariable } from './warden-env.js';

// Codex CLI's `env_vars` (codex-rs config/src/mcp_types.rs McpServerEnvVar): the names of variables Codex copies
// from its own environment into the one it starts the server with (beside a short default list: HOME, PATH...),
// each a name or { name, source } with source "local" or "remote" (read in a remote executor). After import
// Codex starts the warden with them, so they are the warden's environment as much as `env` is: the values are
// the user's own (not the file's), but import cannot see them, nor move them into servers.json as it moves a
// literal one (warden-env.ts). So a name the warden reads itself, or a loader variable, is refused; any other
// name stays in the entry and is listed in servers.json's passEnv, so the server still gets it.

const MAX_NAMES = 256;

/** The names `env_vars` passes, or why it is refused. */
export function hostVariables(v: unknown): { names: string[] } | { reason: string } {
  if (v === undefined) return { names: [] };
  if (!Array.isArray(v) || v.length > MAX_NAMES) return { reason: `"env_vars" is not a list of at most ${MAX_NAMES} variable names` };
  const names: string[] = [];
  for (const item of v) {
    let name: unknown = item;
    if (item && typeof item === 'object' && !Array.isArray(item)) {
      const o = item as Record<string, unknown>;
      if (Object.keys(o).some((k) => k !== 'name' && k !== 'source')) return { reason: '"env_vars" holds a table with members other than "name" and "source"' };
      if (o.source !== undefined && o.source !== 'local') return { reason: `"env_vars" reads ${printable(String(o.name))} from source ${typeof o.source === 'string' ? `"${printable(o.source, 40)}"` : 'of another type'}, not from this machine ("local"), where import cannot follow it` };
      name = o.name;
    }
    if (typeof name !== 'string' || !ENV_NAME_RE.test(name)) return { reason: `"env_vars" names ${printable(JSON.stringify(name) ?? '?', 100)}, which is not an environment variable name` };
    const loader = loaderVariable(name);
    if (loader) return { reason: `"env_vars" passes ${name}, ${loader}; the warden refuses it. Remove it from the entry, then import again` };
    if (isWardenVariable(name)) return { reason: `"env_vars" passes ${name} from Codex's environment, a variable the warden reads itself (where its home is, how node or TLS behaves), with a value import cannot see or move into servers.json. Remove it from "env_vars" (set it with 'mcp-warden add --env ${name}=VALUE' if the server needs it), then import again` };
    if (names.includes(name)) return { reason: `"env_vars" names ${name} twice` };
    names.push(name);
  }
  return { names };
}
