import { escaped, printable } from '../escape.js';
import { RULES, type FindingCode, type Severity } from './rules.js';
import { nameHit, nameSkeleton, parameterHits, textHits, type TextHit } from './text-rules.js';

// The scan of one server's surface before it is trusted (issue 30): every string of every item (tools whole,
// member names included; the instructions; prompts with their arguments; resources and templates), each tool's
// name and parameters, and what it shares with the other enrolled servers. A finding names its code, severity,
// item and JSON pointer; the text it shows is an excerpt already through the one escaper, so no consumer can
// print it raw. The audit log takes codes and pointers only.

export type ItemKind = 'instructions' | 'tool' | 'prompt' | 'resource' | 'template';

export interface ScanItem {
  kind: ItemKind;
  /** The item's name (a tool's or prompt's name, a resource's uri, a template's uriTemplate; '' for instructions). */
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
    walk(item.value, '', (text, pointer, isKey) => {
      for (const hit of textHits(text)) out.add(hit.code, at, pointer, text, hit);
      const ref = isKey ? null : shadows.reference?.exec(text);
      if (ref) out.add('SHADOW_REFERENCE', at, pointer, text, { code: 'SHADOW_REFERENCE', at: ref.index, length: ref[0].length }, `(${printable(shadows.owner.get(ref[1] ?? '') ?? '', 40)})`);
    });
    if (item.kind !== 'tool') continue;
    const name = member(item.value, 'name');
    if (typeof name === 'string') {
      const hit = nameHit(name);
      if (hit) out.add(hit.code, at, '/name', name, hit);
      const other = shadows.names.get(nameSkeleton(name));
      if (other) out.add('SHADOW_NAME', at, '/name', name, { code: 'SHADOW_NAME', at: 0, length: name.length }, `(also ${printable(other, 40)})`);
    }
    parameters(member(item.value, 'inputSchema'), '/inputSchema', (pname, description, pointer) => {
      for (const hit of parameterHits(pname, description)) out.add(hit.code, at, pointer, hit.at === 0 && hit.length === pname.length ? pname : (description ?? ''), hit);
    });
  }
  return out.result();
}

class Collector {
  private readonly seen = new Set<string>();
  private readonly findings: Finding[] = [];
  private more = 0;

  constructor(private readonly server: string) {}

  add(code: FindingCode, item: Finding['item'], pointer: string, text: string, hit: TextHit, note = ''): void {
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
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return Object.hasOwn(v, key) ? (v as Record<string, unknown>)[key] : undefined;
  return undefined;
}

function entries(v: unknown): [string, unknown][] | undefined {
  if (v instanceof Map) return [...v.entries()] as [string, unknown][];
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return Object.entries(v);
  return undefined;
}

const segment = (key: string): string => printable(key.replace(/~/g, '~0').replace(/\//g, '~1'), 64);

/** Every string of a value, member names included, with its pointer (depth-first, iterative: no stack to blow). */
function walk(root: unknown, base: string, visit: (text: string, pointer: string, isKey: boolean) => void): void {
  const stack: [unknown, string][] = [[root, base]];
  while (stack.length > 0) {
    const [v, pointer] = stack.pop() as [unknown, string];
    if (typeof v === 'string') visit(v, pointer, false);
    else if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${pointer}/${i}`]);
    else {
      const members = entries(v);
      if (!members) continue;
      for (let i = members.length - 1; i >= 0; i--) {
        const [k, x] = members[i] as [string, unknown];
        const p = `${pointer}/${segment(k)}`;
        visit(k, p, true);
        stack.push([x, p]);
      }
    }
  }
}

/** Each parameter of an input schema: the names under every `properties` object, at any depth. */
function parameters(schema: unknown, base: string, visit: (name: string, description: string | undefined, pointer: string) => void): void {
  const stack: [unknown, string][] = [[schema, base]];
  while (stack.length > 0) {
    const [v, pointer] = stack.pop() as [unknown, string];
    if (Array.isArray(v)) {
      v.forEach((x, i) => stack.push([x, `${pointer}/${i}`]));
      continue;
    }
    const members = entries(v);
    if (!members) continue;
    for (const [k, x] of members) {
      const p = `${pointer}/${segment(k)}`;
      if (k === 'properties') {
        for (const [name, prop] of entries(x) ?? []) {
          const description = member(prop, 'description');
          visit(name, typeof description === 'string' ? description : undefined, `${p}/${segment(name)}`);
        }
      }
      stack.push([x, p]);
    }
  }
}

interface ShadowIndex {
  /** Skeletons of other servers' tool names, to the server that has each. */
  names: Map<string, string>;
  /** Other servers' distinctive tool names, as whole words. */
  reference: RegExp | null;
  owner: Map<string, string>;
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
  const alternatives = [...owner.keys()].sort((a, b) => b.length - a.length).map((t) => t.replace(/[.]/g, '\\.'));
  return { names, owner, reference: alternatives.length ? new RegExp(`(?<![\\w.-])(${alternatives.join('|')})(?![\\w-]|\\.\\w)`) : null };
}
