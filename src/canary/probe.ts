import { canonicalize } from '../protocol/json/canonical.js';
import { JsonNumber, type JsonObject, type JsonValue } from '../protocol/json/reader.js';
import { tagged } from '../surface/hash.js';

// A canary is a call the operator chose to be harmless, whose answer was pinned: the shape of the response,
// its text after declared normalizations, and how long it took. Every server gets one without configuration:
// a tools/call of a tool name the server does not have. The name is drawn when the baseline is recorded and
// kept with it: an ordinary-looking name, so that nothing in the probe names the warden (docs/adr/0012).
// Baselines recorded before that carry no name and keep the name they were recorded with.

export interface Normalization {
  pattern: string;
  flags?: string;
  replace: string;
}

export interface ProbeSpec {
  name: string;
  tool: string;
  arguments: Record<string, unknown>;
  normalize: Normalization[];
}

export const DEFAULT_PROBE_NAME = 'unknown-tool';
/** The tool the default probe called before its name was drawn per server. */
export const LEGACY_DEFAULT_TOOL = 'mcp-warden-canary-no-such-tool';

const VERBS = ['get', 'list', 'read', 'describe', 'lookup', 'query', 'search', 'show', 'inspect', 'find', 'fetch', 'check'];
const NOUNS = ['record', 'item', 'entry', 'status', 'summary', 'details', 'metadata', 'report', 'index', 'info', 'history', 'settings'];

/** A tool name that reads like any other and is not one of `taken`. */
export function drawUnknownTool(taken: ReadonlySet<string>, random: () => number = Math.random): string {
  const pick = (xs: string[]): string => xs[Math.floor(random() * xs.length)] as string;
  for (;;) {
    const name = `${pick(VERBS)}_${pick(NOUNS)}${random() < 0.5 ? '' : `_${pick(NOUNS)}`}`;
    if (!taken.has(name)) return name;
  }
}

/** The probes of a server: the default one (calling `defaultTool`), then the configured ones. */
export function probesOf(configured: readonly ProbeSpec[], defaultTool: string): ProbeSpec[] {
  const builtIn: ProbeSpec = { name: DEFAULT_PROBE_NAME, tool: defaultTool, arguments: {}, normalize: [] };
  return [builtIn, ...configured.filter((p) => p.name !== DEFAULT_PROBE_NAME)];
}

/** The default probe's tool as its baseline recorded it. */
export function defaultToolOf(baselines: Record<string, { tool?: string }> | undefined): string {
  return baselines?.[DEFAULT_PROBE_NAME]?.tool ?? LEGACY_DEFAULT_TOOL;
}

/** The default probe must never call a tool the server has (its name was drawn as one it did not have). */
export function collides(probe: ProbeSpec, listed: ReadonlySet<string>): boolean {
  return probe.name === DEFAULT_PROBE_NAME && listed.has(probe.tool);
}

/** Why a default probe was not run: its tool became a real tool of the server (calling it could do something). */
export function collisionMessage(serverId: string, probe: ProbeSpec): string {
  return `server '${serverId}' now has a tool named "${probe.tool}", the name its default canary calls as one it does not have; the canary was not run. Record new baselines with: mcp-warden canary record ${serverId}`;
}

/** The shape of an answer: a JSON-RPC error (with its code) or a result (with its isError flag). */
export type Shape = { kind: 'error'; code: number | null } | { kind: 'result'; isError: boolean };

export interface Observation {
  shape: Shape;
  /** sha256 of the normalized text; the text itself is never stored or logged. */
  hText: string;
  latencyMs: number;
}

function textOf(response: JsonObject): { shape: Shape; text: string } {
  const error = response.get('error');
  if (error instanceof Map) {
    const code = error.get('code');
    const message = error.get('message');
    return { shape: { kind: 'error', code: code instanceof JsonNumber ? Number(code.lexeme) : null }, text: typeof message === 'string' ? message : '' };
  }
  const result = response.get('result');
  const isError = result instanceof Map && result.get('isError') === true;
  const content = result instanceof Map ? result.get('content') : undefined;
  const texts = Array.isArray(content)
    ? content.map((c: JsonValue) => (c instanceof Map && typeof c.get('text') === 'string' ? (c.get('text') as string) : canonicalize(c)))
    : [result === undefined ? '' : canonicalize(result)];
  return { shape: { kind: 'result', isError }, text: texts.join('\n') };
}

/** Applies the declared normalizations, in order. */
export function normalizeText(text: string, rules: readonly Normalization[]): string {
  return rules.reduce((t, r) => t.replace(new RegExp(r.pattern, r.flags ?? 'g'), r.replace), text);
}

export function observe(response: JsonObject, spec: ProbeSpec, latencyMs: number): Observation {
  const { shape, text } = textOf(response);
  return { shape, hText: tagged(normalizeText(text, spec.normalize)), latencyMs };
}
