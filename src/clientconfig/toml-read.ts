import { parse, TomlError } from 'smol-toml';
import { WardenError } from '../error.js';
import type { ClientConfig, ClientEntry } from './read.js';
import { scanToml, type TomlStatement } from './toml-scan.js';

// Codex CLI's ~/.codex/config.toml (and a trusted project's .codex/config.toml): its MCP servers are the tables
// `[mcp_servers.NAME]` (command, args, env, env_vars, cwd, timeouts, enabled, tool filters; or url and its
// authentication for a remote one: codex-rs config/src/mcp_types.rs RawMcpServerConfig). smol-toml (pinned,
// docs/adr/0070-codex-config-toml.md) reads what the file means; toml-scan.ts where each entry is written. An
// entry's text, offset and length are those of its own table: its header and its pairs, up to the last one
// before the next header (comments and blank lines after it belong to what follows). An entry not written as a
// table of its own (dotted keys, an inline table) has offset -1: classify.ts reads it, import does not edit it.

const MAX_DEPTH = 64;

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => !!v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);

/** What `text` means as TOML, or the refusal saying where it is not TOML. */
export function parseToml(file: string, text: string): Table {
  try {
    return parse(text, { maxDepth: MAX_DEPTH, integersAsBigInt: false, unsafeKeyBehaviour: 'keep' }) as Table;
  } catch (err) {
    if (!(err instanceof TomlError)) throw err;
    const first = err.message.split('\n')[0] ?? '';
    throw new WardenError('CLIENT_CONFIG_INVALID', `${file} is not valid TOML at line ${err.line}, column ${err.column}: ${first}. Nothing was changed.`);
  }
}

/** The span of the table `[mcp_servers.NAME]` in `stmts`: its header and its pairs, or undefined. */
export function tableSpan(stmts: readonly TomlStatement[], name: string): { start: number; end: number; header: number } | undefined {
  const at = (s: TomlStatement): boolean => s.kind === 'header' && !s.inArray && s.path.length === 2 && s.path[0] === 'mcp_servers' && s.path[1] === name;
  const headers = stmts.filter(at);
  if (headers.length !== 1) return undefined;
  const header = stmts.indexOf(headers[0] as TomlStatement);
  let end = (headers[0] as TomlStatement).end;
  for (let i = header + 1; i < stmts.length && stmts[i]?.kind === 'pair'; i++) end = (stmts[i] as TomlStatement).end;
  return { start: (headers[0] as TomlStatement).start, end, header };
}

export function parseCodexConfig(file: string, text: string): ClientConfig {
  const doc = parseToml(file, text);
  if (!Object.hasOwn(doc, 'mcp_servers')) throw new WardenError('CLIENT_CONFIG_INVALID', `${file} has no "mcp_servers" table: is it Codex CLI's config.toml? Nothing was changed.`);
  const servers = doc.mcp_servers;
  if (!isTable(servers)) throw new WardenError('CLIENT_CONFIG_INVALID', `${file}: "mcp_servers" is not a table. Nothing was changed.`);
  const stmts = scanToml(text) ?? [];
  const entries: ClientEntry[] = Object.entries(servers).map(([name, value]) => {
    const span = tableSpan(stmts, name);
    return {
      name,
      file,
      kind: 'codex',
      location: ['mcp_servers', name],
      value,
      inputs: undefined,
      text: span ? text.slice(span.start, span.end) : '',
      offset: span ? span.start : -1,
      length: span ? span.end - span.start : 0,
    };
  });
  return { file, kind: 'codex', text, entries };
}
