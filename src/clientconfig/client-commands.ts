import { findNodeAtLocation, getNodeValue, parseTree } from 'jsonc-parser';
import { WardenError } from '../error.js';
import type { ClientConfig } from './read.js';

// Settings of a client file, outside its server entries, that make the client run a command of its own which
// gives the model tools or starts an MCP server: wrapping the file's servers would leave that command running
// outside the warden, its tools never judged. Gemini CLI (packages/cli/src/config/settingsSchema.ts):
// "tools.discoveryCommand" (its output declares tools), "tools.callCommand" (runs each of them),
// "mcp.serverCommand" (starts an MCP server); before January 2026 (v1 settings, migrated until then) the same at
// the top level. Present with any value but null, they refuse the whole file for `import` (unwrap, which only
// takes the warden out, still reads it). Hooks, the sandbox and the shell pager run commands too, but give no
// tools and start no server: not looked at here (docs/threat-model.md).

const COMMANDS: readonly (readonly string[])[] = [
  ['toolDiscoveryCommand'],
  ['toolCallCommand'],
  ['mcpServerCommand'],
  ['tools', 'discoveryCommand'],
  ['tools', 'callCommand'],
  ['mcp', 'serverCommand'],
];

/** Refuses a client file carrying one of COMMANDS (CLIENT_CONFIG_INVALID: the file, not an entry, is at fault). */
export function refuseClientCommands(cfg: ClientConfig): void {
  // Codex's config.toml: its settings that run commands (notify, hooks, the shell) give no tools and start no
  // server; its servers are its mcp_servers entries (docs/threat-model.md).
  if (cfg.kind === 'codex') return;
  const root = parseTree(cfg.text, [], { allowTrailingComma: true });
  if (!root) return; // read.ts parsed it already: never reached
  for (const at of COMMANDS) {
    const node = findNodeAtLocation(root, [...at]);
    if (!node || getNodeValue(node) === null) continue;
    const named = at.map((m) => `"${m}"`).join(' > ');
    throw new WardenError('CLIENT_CONFIG_INVALID', `${cfg.file}: ${named} makes the client run a command of its own that gives the model tools or starts an MCP server, outside the warden: wrapping this file's servers would leave it unsupervised. Remove ${named} (or move what it runs into an MCP server the warden wraps), then import again. Nothing was changed.`);
  }
}
