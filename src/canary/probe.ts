import { canonicalize } from '../protocol/json/canonical.js';
import { JsonNumber, type JsonObject, type JsonValue } from '../protocol/json/reader.js';
import { tagged } from '../surface/hash.js';

// A canary is a call the operator chose to be harmless, whose answer was pinned: the shape of the response,
// its text after declared normalizations, and how long it took. Every server gets one without configuration:
// a tools/call of a tool name that cannot exist.

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

export const DEFAULT_PROBE: ProbeSpec = {
  name: 'unknown-tool',
  tool: 'mcp-warden-canary-no-such-tool',
  arguments: {},
  normalize: [],
};

/** The probes of a server: the default one, then the configured ones. */
export function probesOf(configured: readonly ProbeSpec[]): ProbeSpec[] {
  return [DEFAULT_PROBE, ...configured.filter((p) => p.name !== DEFAULT_PROBE.name)];
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
