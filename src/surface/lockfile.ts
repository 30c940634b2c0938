import { canonicalize, fromPlain } from '../protocol/json/canonical.js';
import { JsonNumber, JsonReadError, readJson, type JsonObject, type JsonValue } from '../protocol/json/reader.js';
import { serialize } from '../protocol/json/write.js';
import { ABSENT, hashOrAbsent, tagged } from './hash.js';
import { indentCanonical } from './indent.js';
import type { Handshake, LiveTool } from './admit.js';

// tools.lock, lockfile_version 1, exactly as the public surfacelock SPEC.md defines it: same preimages, same
// rendering (RFC 8785, re-indented, one LF), same validity rules (§7, unknown fields refused). Nothing of the
// warden's own goes in it (that is warden.lock).

export interface LockTool {
  name: string;
  h_desc: string;
  h_schema: string;
  h_tool: string;
  tool: JsonObject;
}

export interface LockEntry {
  transport: 'stdio' | 'http';
  target: string;
  args: string[];
  protocol: { offered: string; era: string; flow?: 'classic' | 'stateless' };
  server_info?: { name?: string; version?: string };
  instructions?: string;
  h_instructions: string;
  surface_hash: string;
  tools: LockTool[];
}

export type ToolsLock = Map<string, LockEntry>;

export class LockfileError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'LockfileError';
  }
}

const byName = (a: { name: string }, b: { name: string }): number => (Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));

/** The §5 rollup over era, h_instructions and (name, h_tool) sorted by name. */
export function surfaceHash(era: string, hInstructions: string, tools: readonly { name: string; h_tool: string }[]): string {
  const sorted = [...tools].sort(byName).map((t) => ({ h_tool: t.h_tool, name: t.name }));
  return tagged(canonicalize(fromPlain({ era, h_instructions: hInstructions, tools: sorted })));
}

/** h_instructions of a handshake: the hash of its instructions string, or the absent sentinel. */
export function instructionsHash(hs: Handshake): string {
  return hs.instructions === undefined ? ABSENT : tagged(canonicalize(hs.instructions));
}

/** The surface_hash of a live surface, as a lock of it would record it. */
export function liveSurfaceHash(hs: Handshake, tools: readonly LiveTool[]): string {
  return surfaceHash(hs.era, instructionsHash(hs), tools.map((t) => ({ name: t.name, h_tool: t.hTool })));
}

/** A lock entry for a live, admitted surface, fetched over `flow` offering `offered`. */
export function entryFor(command: string, args: string[], offered: string, hs: Handshake, tools: readonly LiveTool[], flow: 'classic' | 'stateless' = 'classic'): LockEntry {
  const lockTools = tools
    .map((t) => ({ name: t.name, h_desc: t.hDesc, h_schema: t.hSchema, h_tool: t.hTool, tool: t.value }))
    .sort(byName);
  const hInstructions = instructionsHash(hs);
  const entry: LockEntry = {
    transport: 'stdio',
    target: command,
    args,
    protocol: { offered, era: hs.era, flow },
    h_instructions: hInstructions,
    surface_hash: surfaceHash(hs.era, hInstructions, lockTools),
    tools: lockTools,
  };
  if (hs.serverInfo.name !== undefined || hs.serverInfo.version !== undefined) entry.server_info = { ...hs.serverInfo };
  if (hs.instructions !== undefined) entry.instructions = hs.instructions;
  return entry;
}

function entryValue(e: LockEntry): JsonValue {
  const m: JsonObject = new Map<string, JsonValue>([
    ['transport', e.transport],
    ['target', e.target],
    ['args', e.args],
    ['protocol', fromPlain(e.protocol)],
    ['h_instructions', e.h_instructions],
    ['surface_hash', e.surface_hash],
    ['tools', e.tools.map((t) => new Map<string, JsonValue>([['name', t.name], ['h_desc', t.h_desc], ['h_schema', t.h_schema], ['h_tool', t.h_tool], ['tool', t.tool]]))],
  ]);
  if (e.server_info) m.set('server_info', fromPlain(e.server_info));
  if (e.instructions !== undefined) m.set('instructions', e.instructions);
  return m;
}

/** Renders a lockfile: RFC 8785 of the whole document, re-indented, one trailing LF (SPEC §4). */
export function renderToolsLock(lock: ToolsLock): string {
  const servers: JsonObject = new Map([...lock].map(([name, e]) => [name, entryValue(e)]));
  const doc: JsonObject = new Map<string, JsonValue>([['lockfile_version', new JsonNumber('1')], ['servers', servers]]);
  return indentCanonical(canonicalize(doc)) + '\n';
}

/** A lock of the same content as parseToolsLock read it, number lexemes kept as written (not the RFC 8785
 *  rendering, which would turn 9007199254740993 into ...992): for the warden's own caches, never tools.lock. */
export function serializeToolsLock(lock: ToolsLock): string {
  const servers: JsonObject = new Map([...lock].map(([name, e]) => [name, entryValue(e)]));
  return serialize(new Map<string, JsonValue>([['lockfile_version', new JsonNumber('1')], ['servers', servers]]));
}

// ---- reading and validating (SPEC §7) ----

function obj(v: JsonValue | undefined, at: string): JsonObject {
  if (!(v instanceof Map)) throw new LockfileError(`${at} must be an object`);
  return v;
}

function str(v: JsonValue | undefined, at: string): string {
  if (typeof v !== 'string') throw new LockfileError(`${at} must be a string`);
  return v;
}

function onlyKeys(o: JsonObject, allowed: string[], required: string[], at: string): void {
  for (const k of o.keys()) if (!allowed.includes(k)) throw new LockfileError(`${at} has an unknown field "${k}"`);
  for (const k of required) if (!o.has(k)) throw new LockfileError(`${at} is missing "${k}"`);
}

function readTool(v: JsonValue | undefined, at: string): LockTool {
  const o = obj(v, at);
  onlyKeys(o, ['name', 'h_desc', 'h_schema', 'h_tool', 'tool'], ['name', 'h_desc', 'h_schema', 'h_tool', 'tool'], at);
  const tool = obj(o.get('tool'), `${at}/tool`);
  const t: LockTool = { name: str(o.get('name'), `${at}/name`), h_desc: str(o.get('h_desc'), `${at}/h_desc`), h_schema: str(o.get('h_schema'), `${at}/h_schema`), h_tool: str(o.get('h_tool'), `${at}/h_tool`), tool };
  if (tool.get('name') !== t.name) throw new LockfileError(`${at}/name does not equal its tool.name`);
  const check = (field: string, stored: string, recomputed: string): void => {
    if (stored !== recomputed) throw new LockfileError(`${at}/${field} is ${stored}, but its stored content hashes to ${recomputed} (the lockfile is corrupt or was edited)`);
  };
  check('h_tool', t.h_tool, tagged(canonicalize(tool)));
  check('h_desc', t.h_desc, hashOrAbsent(tool.get('description')));
  check('h_schema', t.h_schema, hashOrAbsent(tool.get('inputSchema')));
  return t;
}

function readEntry(v: JsonValue | undefined, at: string): LockEntry {
  const o = obj(v, at);
  onlyKeys(o, ['transport', 'target', 'args', 'protocol', 'server_info', 'instructions', 'h_instructions', 'surface_hash', 'tools'], ['transport', 'target', 'args', 'protocol', 'h_instructions', 'surface_hash', 'tools'], at);
  const transport = str(o.get('transport'), `${at}/transport`);
  if (transport !== 'stdio' && transport !== 'http') throw new LockfileError(`${at}/transport must be "stdio" or "http"`);
  const argsV = o.get('args');
  if (!Array.isArray(argsV)) throw new LockfileError(`${at}/args must be an array`);
  const args = argsV.map((a, i) => str(a, `${at}/args/${i}`));
  const p = obj(o.get('protocol'), `${at}/protocol`);
  onlyKeys(p, ['offered', 'era', 'flow'], ['offered', 'era'], `${at}/protocol`);
  const flow = p.get('flow');
  if (flow !== undefined && flow !== 'classic' && flow !== 'stateless') throw new LockfileError(`${at}/protocol/flow must be "classic" or "stateless"`);
  const protocol: LockEntry['protocol'] = { offered: str(p.get('offered'), `${at}/protocol/offered`), era: str(p.get('era'), `${at}/protocol/era`), ...(flow ? { flow } : {}) };
  const toolsV = o.get('tools');
  if (!Array.isArray(toolsV)) throw new LockfileError(`${at}/tools must be an array`);
  const tools = toolsV.map((t, i) => readTool(t, `${at}/tools/${i}`));
  for (let i = 1; i < tools.length; i++) {
    if (byName(tools[i - 1] as LockTool, tools[i] as LockTool) >= 0) throw new LockfileError(`${at}/tools is not sorted by name (or names a tool twice)`);
  }
  const entry: LockEntry = { transport, target: str(o.get('target'), `${at}/target`), args, protocol, h_instructions: str(o.get('h_instructions'), `${at}/h_instructions`), surface_hash: str(o.get('surface_hash'), `${at}/surface_hash`), tools };
  const info = o.get('server_info');
  if (info !== undefined) {
    const i = obj(info, `${at}/server_info`);
    onlyKeys(i, ['name', 'version'], [], `${at}/server_info`);
    entry.server_info = {};
    if (i.has('name')) entry.server_info.name = str(i.get('name'), `${at}/server_info/name`);
    if (i.has('version')) entry.server_info.version = str(i.get('version'), `${at}/server_info/version`);
  }
  const instr = o.get('instructions');
  if (instr !== undefined) entry.instructions = str(instr, `${at}/instructions`);
  const hInstr = instr === undefined ? ABSENT : tagged(canonicalize(instr));
  if (instr !== undefined && entry.h_instructions !== hInstr) throw new LockfileError(`${at}/h_instructions does not match its instructions (the lockfile is corrupt or was edited)`);
  const rollup = surfaceHash(protocol.era, entry.h_instructions, tools);
  if (rollup !== entry.surface_hash) throw new LockfileError(`${at}/surface_hash is ${entry.surface_hash}, but the entry's content rolls up to ${rollup} (the lockfile is corrupt or was edited)`);
  return entry;
}

/** Parses and validates tools.lock bytes. Throws LockfileError naming the JSON pointer of the problem. */
export function parseToolsLock(bytes: Uint8Array | string): ToolsLock {
  let doc: JsonValue;
  try {
    doc = readJson(bytes, { maxBytes: 256 * 1024 * 1024, maxDepth: 128 });
  } catch (err) {
    if (err instanceof JsonReadError) throw new LockfileError(`not valid JSON: ${err.message}`);
    throw err;
  }
  const root = obj(doc, '/');
  onlyKeys(root, ['lockfile_version', 'servers'], ['lockfile_version', 'servers'], '/');
  const version = root.get('lockfile_version');
  if (!(version instanceof JsonNumber) || Number(version.lexeme) !== 1) throw new LockfileError('/lockfile_version must be 1');
  const servers = obj(root.get('servers'), '/servers');
  return new Map([...servers].map(([name, e]) => [name, readEntry(e, `/servers/${name}`)]));
}
