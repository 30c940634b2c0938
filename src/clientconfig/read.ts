import fs from 'node:fs';
import path from 'node:path';
import { createScanner, findNodeAtLocation, getNodeValue, parseTree, printParseErrorCode, SyntaxKind, type Node, type ParseError } from 'jsonc-parser';
import { WardenError } from '../error.js';
import { escaped, printable } from '../escape.js';
import { caseVariant, foldedNames, type FoldedNames } from '../protocol/fold.js';
import { fileInputs, NO_INPUTS, type FileInputs } from './client-variables.js';
import { PROTO } from './proto-member.js';
import { parseCodexConfig } from './toml-read.js';

// An MCP client's configuration file, read with the exact text and offsets of every server entry, so that an
// entry can be replaced, and later restored, without touching a byte around it. The shapes (from the clients'
// documentation):
//   Claude Desktop  claude_desktop_config.json   { "mcpServers": { name: { command, args, env } } }
//   Claude Code     .mcp.json                    { "mcpServers": { name: { type?, command, args, env } | { type: "http", url } } }
//                   ~/.claude.json               the same at the top level (user scope) and under "projects": { dir: { "mcpServers" } }
//   Cursor          .cursor/mcp.json             { "mcpServers": { name: { command, args, env } | { url } } }
//   VS Code         .vscode/mcp.json (JSONC)     { "inputs": [...], "servers": { name: { type, command, args, env, envFile } } }
//   Codex CLI       ~/.codex/config.toml (TOML)  [mcp_servers.name] command, args, env, env_vars, cwd (toml-read.ts)
// Comments and trailing commas are accepted everywhere (VS Code's format has them; the others are plain JSON, a
// subset). A name given twice in any object of the file, at any depth, is refused before anything else is read:
// JSON.parse, which most clients use, keeps the last, editors (and the rewrite) the first. Names are compared
// after their escapes are read ("\u0061rgs" is "args"), and case-sensitively, as every client and the kernel do.
// But some clients match member names ignoring case and keep the last (Go's encoding/json, .NET's
// PropertyNameCaseInsensitive, viper): so a member the warden reads or rewrites, at the top level, in a project
// of ~/.claude.json, or in an entry, refuses the file when another spelling of it is there too, or instead of it
// (protocol/fold.ts: "Command", "argſ", "command\0x").

export type ClientKind = 'claude-desktop' | 'claude-code' | 'claude-code-user' | 'cursor' | 'vscode' | 'mcp-servers' | 'codex';

export const CLIENT_LABELS: Record<ClientKind, string> = {
  'claude-desktop': 'Claude Desktop',
  'claude-code': 'Claude Code (project .mcp.json)',
  'claude-code-user': 'Claude Code (~/.claude.json)',
  cursor: 'Cursor',
  vscode: 'VS Code',
  'mcp-servers': 'an "mcpServers" configuration',
  codex: 'Codex CLI (config.toml)',
};

/** The members that name a server map, in every format above (top level; "mcpServers" in a project too). */
const MAP_MEMBERS = ['mcpServers', 'servers', 'projects'];
/** The members of an entry the warden reads (classify.ts, warden-entry.ts) or rewrites (rewrite.ts), and
 *  "transport", which some clients read for "type" (test/clientconfig/case-variants.test.ts keeps the list). */
export const ENTRY_MEMBERS = ['command', 'args', 'env', 'cwd', 'type', 'url', 'serverUrl', 'httpUrl', 'envFile', 'transport', 'transportType', 'env_vars'];

const MAX_FILE = 16 * 1024 * 1024;
/** Objects and arrays nested deeper are refused before parsing (the parser recurses; a client file nests ~5 deep). */
const MAX_DEPTH = 256;

export interface ClientEntry {
  /** The entry's name in the file. */
  name: string;
  /** The file it is in (its real path) and the file's format. */
  file: string;
  kind: ClientKind;
  /** Where its value is: ["mcpServers", name], ["servers", name] or ["projects", dir, "mcpServers", name]. */
  location: string[];
  /** The Claude Code project directory an entry of ~/.claude.json belongs to. */
  project?: string;
  value: unknown;
  /** The file's top-level "inputs" where its client resolves `${input:...}` (VS Code; Cursor, none), for
   *  client-variables.ts; undefined where it does not. */
  inputs: FileInputs | undefined;
  /** The exact source text of the value, and where it is. */
  text: string;
  offset: number;
  length: number;
}

export interface ClientConfig {
  file: string;
  kind: ClientKind;
  text: string;
  entries: ClientEntry[];
}

function kindOf(file: string, root: Node): ClientKind {
  const base = path.basename(file);
  const parent = path.basename(path.dirname(file));
  if (base === 'claude_desktop_config.json') return 'claude-desktop';
  if (base === '.claude.json') return 'claude-code-user';
  if (base === '.mcp.json') return 'claude-code';
  if (base === 'mcp.json' && parent === '.cursor') return 'cursor';
  if (base === 'mcp.json' && parent === '.vscode') return 'vscode';
  // Named like no client: VS Code's user-level mcp.json reads "servers", the other clients "mcpServers"; a file
  // with both is read one way by one client and the other by another (review 20).
  const keys = new Set((root.children ?? []).map((p) => p.children?.[0]?.value as string));
  if (keys.has('servers') && keys.has('mcpServers')) {
    throw new WardenError('CLIENT_CONFIG_INVALID', `${file} holds both "servers" and "mcpServers": VS Code reads its servers from the first, the other clients from the second, and its name says neither which client it is for. Keep one of the two (or give the file its client's name: .vscode/mcp.json), then try again. Nothing was changed.`);
  }
  return keys.has('servers') ? 'vscode' : 'mcp-servers';
}

function lineCol(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

/** The properties of an object node, refusing a name given twice. */
function properties(file: string, text: string, node: Node, where: string): Map<string, Node> {
  const out = new Map<string, Node>();
  for (const prop of node.children ?? []) {
    const [key, value] = prop.children ?? [];
    if (!key || !value) continue;
    const name = key.value as string;
    if (out.has(name)) {
      throw new WardenError('CLIENT_CONFIG_INVALID', `${file}: "${name}" appears twice in ${where} (${lineCol(text, key.offset)}); clients disagree on which one counts. Remove one, then import again.`);
    }
    out.set(name, value);
  }
  return out;
}

/** Where the entries of a file of this kind are: each is a prefix followed by the entry's name. */
function entryPrefixes(kind: ClientKind): string[][] {
  return kind === 'vscode' ? [['servers']] : kind === 'claude-code-user' ? [['mcpServers'], ['projects', '*', 'mcpServers']] : [['mcpServers']];
}

/** What a path inside the file is, for a message: the top level, an entry (and the JSON pointer inside it, RFC
 *  6901), or the names that lead to it. */
function placeOf(kind: ClientKind, at: (string | number)[]): string {
  if (at.length === 0) return 'the top level';
  for (const prefix of entryPrefixes(kind)) {
    if (at.length <= prefix.length || !prefix.every((p, i) => p === '*' || p === at[i])) continue;
    const pointer = at.map((s) => '/' + String(s).replaceAll('~', '~0').replaceAll('/', '~1')).join('');
    const project = prefix.length > 1 ? ` of project "${printable(String(at[1]), 200)}"` : '';
    return `the entry "${printable(String(at[prefix.length]))}"${project}, at JSON pointer ${escaped(pointer.slice(0, 400))}`;
  }
  return at.map((s) => (typeof s === 'number' ? `[${s}]` : `"${printable(s)}"`)).join(' > ');
}

/** Whether `at` is an entry or inside one (an entry's "__proto__" refuses only the entry: proto-member.ts). */
function inEntry(kind: ClientKind, at: (string | number)[]): boolean {
  return entryPrefixes(kind).some((prefix) => at.length > prefix.length && prefix.every((p, i) => p === '*' || p === at[i]));
}

/** Refuses a name given twice in any object of the tree, at any depth (walked without recursion; each item links
 *  to its parent, so a deep file costs no copied paths). */
function refuseDuplicateMembers(file: string, text: string, kind: ClientKind, root: Node): void {
  interface Item { node: Node; up?: Item; seg?: string | number }
  const pathOf = (item: Item): (string | number)[] => {
    const at: (string | number)[] = [];
    for (let i: Item | undefined = item; i?.up; i = i.up) at.push(i.seg as string | number);
    return at.reverse();
  };
  const stack: Item[] = [{ node: root }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const up = item;
    if (up.node.type === 'array') (up.node.children ?? []).forEach((node, seg) => stack.push({ node, up, seg }));
    if (up.node.type !== 'object') continue;
    const seen = new Set<string>();
    for (const prop of up.node.children ?? []) {
      const [key, value] = prop.children ?? [];
      if (!key) continue;
      const name = key.value as string;
      if (seen.has(name)) {
        throw new WardenError('CLIENT_CONFIG_INVALID', `${file}: "${printable(name)}" appears twice in ${placeOf(kind, pathOf(up))} (${lineCol(text, key.offset)}); clients disagree on which one counts. Remove one, then import again. Nothing was changed.`);
      }
      seen.add(name);
      if (name === PROTO && !inEntry(kind, [...pathOf(up), name])) {
        throw new WardenError('CLIENT_CONFIG_INVALID', `${file}: ${placeOf(kind, pathOf(up))} carries a member named "__proto__" (${lineCol(text, key.offset)}): JSON.parse keeps it as a member, but a client that copies or merges its settings by assignment makes it their prototype and reads its members as settings of their own (servers the warden never saw). No client file needs one: remove it, then try again. Nothing was changed.`);
      }
      if (value) stack.push({ node: value, up, seg: name });
    }
  }
}

const MAP_FOLDED = foldedNames(MAP_MEMBERS);
const PROJECT_FOLDED = foldedNames(['mcpServers']);
const ENTRY_FOLDED = foldedNames(ENTRY_MEMBERS);

/** Refuses an object of the file that carries another spelling of one of `names` (beside it or instead of it),
 *  with `code`: CLIENT_ENTRY_AMBIGUOUS in an entry, CLIENT_CONFIG_INVALID above. `where` names the object (only
 *  on a refusal: naming an entry costs its JSON pointer). */
function refuseCaseVariants(file: string, text: string, node: Node, names: FoldedNames, where: () => string, code: 'CLIENT_CONFIG_INVALID' | 'CLIENT_ENTRY_AMBIGUOUS'): void {
  const keys = (node.children ?? []).flatMap((p) => (p.children?.[0] ? [p.children[0]] : []));
  const hit = caseVariant(keys.map((k) => k.value as string), names);
  if (!hit) return;
  const at = keys.find((k) => k.value === hit.key) as Node;
  const exact = hit.name;
  throw new WardenError(code, `${file}: ${where()} carries "${printable(hit.key)}" (${lineCol(text, at.offset)}), a case-variant of "${exact}": a client that matches member names ignoring case may take it for "${exact}", and what it runs would not be what the warden read or wrote. Remove it (or give it its exact name, once), then try again. Nothing was changed.`);
}

/** Refuses another spelling of a server map's name at the top level and in a project of ~/.claude.json (an
 *  entry's members: entriesOf). */
function refuseCaseVariantMaps(file: string, text: string, kind: ClientKind, root: Node): void {
  refuseCaseVariants(file, text, root, MAP_FOLDED, () => 'the top level', 'CLIENT_CONFIG_INVALID');
  const projects = findNodeAtLocation(root, ['projects']);
  if (kind === 'claude-code-user' && projects?.type === 'object') {
    for (const prop of projects.children ?? []) {
      const [key, value] = prop.children ?? [];
      if (key && value?.type === 'object') refuseCaseVariants(file, text, value, PROJECT_FOLDED, () => `"projects" > "${printable(key.value as string, 200)}"`, 'CLIENT_CONFIG_INVALID');
    }
  }
}

function entriesOf(file: string, text: string, kind: ClientKind, inputs: FileInputs | undefined, container: Node | undefined, prefix: string[], project?: string): ClientEntry[] {
  if (!container) return [];
  const where = prefix.map((p) => `"${p}"`).join(' > ');
  if (container.type !== 'object') throw new WardenError('CLIENT_CONFIG_INVALID', `${file}: ${where} is not an object (${lineCol(text, container.offset)}).`);
  const members = properties(file, text, container, where);
  for (const [name, node] of members) if (node.type === 'object') refuseCaseVariants(file, text, node, ENTRY_FOLDED, () => placeOf(kind, [...prefix, name]), 'CLIENT_ENTRY_AMBIGUOUS');
  return [...members].map(([name, node]) => ({
    name,
    file,
    kind,
    location: [...prefix, name],
    ...(project !== undefined ? { project } : {}),
    value: getNodeValue(node) as unknown,
    inputs,
    text: text.slice(node.offset, node.offset + node.length),
    offset: node.offset,
    length: node.length,
  }));
}

/** Refuses a text nested deeper than MAX_DEPTH, counted by the scanner (no recursion). */
function refuseDeepNesting(file: string, text: string): void {
  const scanner = createScanner(text, false);
  let depth = 0;
  for (let t = scanner.scan(); t !== SyntaxKind.EOF; t = scanner.scan()) {
    if (t === SyntaxKind.OpenBraceToken || t === SyntaxKind.OpenBracketToken) depth++;
    else if (t === SyntaxKind.CloseBraceToken || t === SyntaxKind.CloseBracketToken) depth--;
    if (depth > MAX_DEPTH) throw new WardenError('CLIENT_CONFIG_INVALID', `${file} nests objects and arrays more than ${MAX_DEPTH} deep (${lineCol(text, scanner.getTokenOffset())}); no MCP client configuration does. Nothing was changed.`);
  }
}

/** `named` is the path the user gave (its name says which client); `file` the real file behind it. */
export function parseClientConfig(file: string, text: string, named = file): ClientConfig {
  if (named.endsWith('.toml')) return parseCodexConfig(file, text); // the one client whose file is TOML
  refuseDeepNesting(file, text);
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  if (first || !root) {
    const at = first ? ` at ${lineCol(text, first.offset)}: ${printParseErrorCode(first.error)}` : '';
    throw new WardenError('CLIENT_CONFIG_INVALID', `${file} is not valid JSON${at}. Nothing was changed.`);
  }
  if (root.type !== 'object') throw new WardenError('CLIENT_CONFIG_INVALID', `${file}: expected a JSON object at the top level. Nothing was changed.`);
  const kind = kindOf(named, root);
  refuseDuplicateMembers(file, text, kind, root);
  const top = properties(file, text, root, 'the top level');
  refuseCaseVariantMaps(file, text, kind, root);
  const entries: ClientEntry[] = [];
  const inputsNode = kind === 'vscode' ? top.get('inputs') : undefined;
  const inputs = inputsNode ? fileInputs(getNodeValue(inputsNode)) : kind === 'vscode' || kind === 'cursor' ? NO_INPUTS : undefined;
  if (kind === 'vscode') entries.push(...entriesOf(file, text, kind, inputs, top.get('servers'), ['servers']));
  else entries.push(...entriesOf(file, text, kind, inputs, top.get('mcpServers'), ['mcpServers']));
  const projects = kind === 'claude-code-user' ? top.get('projects') : undefined;
  if (projects?.type === 'object') {
    for (const [dir, node] of properties(file, text, projects, '"projects"')) {
      if (node.type !== 'object') continue;
      entries.push(...entriesOf(file, text, kind, inputs, properties(file, text, node, `"projects" > "${dir}"`).get('mcpServers'), ['projects', dir, 'mcpServers'], dir));
    }
  }
  if (!top.has(kind === 'vscode' ? 'servers' : 'mcpServers') && !projects) {
    throw new WardenError('CLIENT_CONFIG_INVALID', `${file} has no "${kind === 'vscode' ? 'servers' : 'mcpServers'}" object: is it an MCP client configuration (Claude Desktop, Claude Code, Cursor, VS Code)?`);
  }
  return { file, kind, text, entries };
}

/** Reads the file `given` names; through a symlink (a dotfiles manager's), the real file is the one read and
 *  later written, so the link stays a link. */
export function readClientConfig(given: string): ClientConfig {
  let text: string;
  let file = given;
  try {
    file = fs.realpathSync(given);
    const st = fs.statSync(file);
    if (!st.isFile()) throw new Error('not a regular file');
    if (st.size > MAX_FILE) throw new Error(`larger than ${MAX_FILE} bytes`);
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new WardenError('FILE_UNREADABLE', `cannot read the client configuration ${given}: ${(err as Error).message}.`);
  }
  return parseClientConfig(file, text, given);
}
