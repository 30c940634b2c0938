import { escaped, printable } from '../escape.js';
import { RULES, type FindingCode, type Severity } from './rules.js';
import { nameHit, nameSkeleton, parameterHits, textHits, type TextHit } from './text-rules.js';

// The scan of one server's surface before it is trusted (issue 30): every string of every item (tools whole,
// member names included; the instructions; prompts with their arguments; resources and templates), each tool's
// name and parameters, and what it shares with the other enrolled servers. A finding names its code, severity,
// item and JSON pointer; the text it shows is an excerpt already through the one escaper, so no consumer can
// print it raw. The audit log takes codes and pointers only.

export type ItemKind = 'server' | 'instructions' | 'tool' | 'prompt' | 'resource' | 'template';

export interface ScanItem {
  kind: ItemKind;
  /** The item's name (a tool's or prompt's name, a resource's uri, a template's uriTemplate; '' for the
   *  instructions and for the rest of the initialize result, kind 'server'). */
  name: string;
  /** The item as served (a parsed JSON value: plain objects or Maps). */
  value: unknown;
}

/** Another enrolled server, by its id and its locked tools' names. */
export interface Neighbour {
  server: string;
  tools: readonly string[];
}

export interface Finding {
  code: FindingCode;
  severity: Severity;
  server: string;
  item: { kind: ItemKind; name: string };
  /** JSON pointer inside the item, each segment cut to 64 characters and escaped. */
  pointer: string;
  /** The text around the hit, escaped, at most ~120 characters. */
  excerpt: string;
}

/** Findings kept per server; past it, the scan says how many more there were (`more`). */
export const MAX_FINDINGS = 500;
/** Another server's tool names looked for in this one's text, at most. */
const MAX_NEIGHBOUR_NAMES = 4096;
const EXCERPT_AROUND = 40;
const NAME: Path = { parent: null, key: 'name' };

export interface ScanResult {
  findings: Finding[];
  /** Findings past MAX_FINDINGS, not kept. */
  more: number;
}

export function scanSurface(server: string, items: readonly ScanItem[], neighbours: readonly Neighbour[] = []): ScanResult {
  const out = new Collector(server);
  // A mention of a name this server's own tools have is of its own tool (a shared name is SHADOW_NAME).
  const own = new Set(items.filter((i) => i.kind === 'tool').map((i) => i.name));
  const shadows = shadowIndex(neighbours, own);
  for (const item of items) {
    const at = { kind: item.kind, name: printable(item.name, 80) };
    walk(item.value, (text, path, isKey) => {
      for (const hit of textHits(text)) out.add(hit.code, at, path, text, hit);
      const ref = isKey ? undefined : reference(text, shadows.owner);
      if (ref) out.add('SHADOW_REFERENCE', at, path, text, { code: 'SHADOW_REFERENCE', at: ref.at, length: ref.name.length }, `(${printable(shadows.owner.get(ref.name) ?? '', 40)})`);
    });
    if (item.kind !== 'tool') continue;
    const name = member(item.value, 'name');
    if (typeof name === 'string') {
      const hit = nameHit(name);
      if (hit) out.add(hit.code, at, NAME, name, hit);
      const other = shadows.names.get(nameSkeleton(name));
      if (other) out.add('SHADOW_NAME', at, NAME, name, { code: 'SHADOW_NAME', at: 0, length: name.length }, `(also ${printable(other, 40)})`);
    }
    parameters(member(item.value, 'inputSchema'), { parent: null, key: 'inputSchema' }, (pname, description, path) => {
      for (const hit of parameterHits(pname, description)) out.add(hit.code, at, path, hit.at === 0 && hit.length === pname.length ? pname : (description ?? ''), hit);
    });
  }
  return out.result();
}

class Collector {
  private readonly seen = new Set<string>();
  private readonly findings: Finding[] = [];
  private more = 0;

  constructor(private readonly server: string) {}

  add(code: FindingCode, item: Finding['item'], path: Path, text: string, hit: TextHit, note = ''): void {
    const pointer = pointerOf(path);
    const key = `${code}\u0000${item.kind}\u0000${item.name}\u0000${pointer}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    if (this.findings.length >= MAX_FINDINGS) {
      this.more++;
      return;
    }
    this.findings.push({ code, severity: RULES[code].severity, server: this.server, item, pointer, excerpt: excerpt(text, hit) + (note ? ` ${note}` : '') });
  }

  result(): ScanResult {
    return { findings: this.findings, more: this.more };
  }
}

/** The text around a hit, escaped (a hidden code point shows as its escape). */
function excerpt(text: string, hit: TextHit): string {
  const start = Math.max(0, hit.at - EXCERPT_AROUND);
  const end = Math.min(text.length, hit.at + Math.min(hit.length, 40) + EXCERPT_AROUND);
  return `${start > 0 ? '…' : ''}${escaped(text.slice(start, end))}${end < text.length ? '…' : ''}`;
}

/** A member of a parsed JSON object (a plain object or a Map). */
function member(v: unknown, key: string): unknown {
  if (v instanceof Map) return v.get(key);
  if (plainObject(v)) return Object.hasOwn(v, key) ? v[key] : undefined;
  return undefined;
}

/** An object of JSON.parse (not a number kept as its lexeme, protocol/json's JsonNumber). */
function plainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Where a string is, built as the walk goes and made into a pointer only for a finding. */
type Path = { parent: Path | null; key: string } | null;

const segment = (key: string): string => printable(key.replace(/~/g, '~0').replace(/\//g, '~1'), 64);

/** The JSON pointer of a path, each segment cut and escaped. */
function pointerOf(path: Path): string {
  const keys: string[] = [];
  for (let p = path; p; p = p.parent) keys.push(segment(p.key));
  return keys.length ? `/${keys.reverse().join('/')}` : '';
}

/** Each member of a parsed object, without copying it. */
function eachMember(v: unknown, f: (k: string, x: unknown) => void): void {
  if (v instanceof Map) for (const [k, x] of v) f(k as string, x);
  else if (plainObject(v)) for (const k of Object.keys(v)) f(k, v[k]);
}

/** Every string of a value, member names included, with its path (depth-first, iterative: no stack to blow). */
function walk(root: unknown, visit: (text: string, path: Path, isKey: boolean) => void): void {
  const stack: [unknown, Path][] = [[root, null]];
  while (stack.length > 0) {
    const [v, path] = stack.pop() as [unknown, Path];
    if (typeof v === 'string') visit(v, path, false);
    else if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], { parent: path, key: String(i) }]);
    else {
      eachMember(v, (k, x) => {
        const p = { parent: path, key: k };
        visit(k, p, true);
        stack.push([x, p]);
      });
    }
  }
}

/** Each parameter of an input schema: the names under every `properties` object, at any depth. */
function parameters(schema: unknown, base: Path, visit: (name: string, description: string | undefined, path: Path) => void): void {
  const stack: [unknown, Path][] = [[schema, base]];
  while (stack.length > 0) {
    const [v, path] = stack.pop() as [unknown, Path];
    if (Array.isArray(v)) {
      v.forEach((x, i) => stack.push([x, { parent: path, key: String(i) }]));
      continue;
    }
    eachMember(v, (k, x) => {
      const p = { parent: path, key: k };
      if (k === 'properties') {
        eachMember(x, (name, prop) => {
          const description = member(prop, 'description');
          visit(name, typeof description === 'string' ? description : undefined, { parent: p, key: name });
        });
      }
      stack.push([x, p]);
    });
  }
}

interface ShadowIndex {
  /** Skeletons of other servers' tool names, to the server that has each. */
  names: Map<string, string>;
  /** Other servers' distinctive tool names, to the server that has each. */
  owner: Map<string, string>;
}

const isWordChar = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isJoiner = (c: number): boolean => c === 0x5f || c === 0x2d || c === 0x2e; // _ - .

/** The first word of `text` that is another server's distinctive tool name: words as tool names are written
 *  (letters and digits, "_", "-" or "." between them), looked up only when they have a joiner or an inner
 *  capital (a plain word is never distinctive). One pass, no allocation for the others. */
function reference(text: string, owner: ReadonlyMap<string, string>): { name: string; at: number } | undefined {
  if (owner.size === 0) return undefined;
  const n = text.length;
  let i = 0;
  while (i < n) {
    if (!isWordChar(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    let distinctive = false;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (isWordChar(c)) {
        if (c >= 0x41 && c <= 0x5a && i > start) distinctive = true;
        i++;
      } else if (isJoiner(c) && i + 1 < n && isWordChar(text.charCodeAt(i + 1))) {
        distinctive = true;
        i++;
      } else break;
    }
    if (distinctive) {
      const word = text.slice(start, i);
      if (owner.has(word)) return { name: word, at: start };
    }
  }
  return undefined;
}

/** A tool name distinctive enough that its mention is a reference, not a word: 4+ characters with a separator
 *  or an inner capital (send_email, readFile, git.push), never a plain word such as "search". */
const DISTINCTIVE = /^(?=.{4,64}$)[A-Za-z0-9]+(?:[_.-][A-Za-z0-9]+)+$|^(?=.{4,64}$)[a-z0-9]+(?:[A-Z][a-z0-9]*)+$/;

function shadowIndex(neighbours: readonly Neighbour[], own: ReadonlySet<string>): ShadowIndex {
  const names = new Map<string, string>();
  const owner = new Map<string, string>();
  for (const n of neighbours) {
    for (const t of n.tools) {
      if (!names.has(nameSkeleton(t))) names.set(nameSkeleton(t), n.server);
      if (DISTINCTIVE.test(t) && !own.has(t) && owner.size < MAX_NEIGHBOUR_NAMES && !owner.has(t)) owner.set(t, n.server);
    }
  }
  return { names, owner };
}
