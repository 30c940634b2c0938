import * as v from 'valibot';
import { canonicalize, fromPlain } from '../protocol/json/canonical.js';
import { JsonReadError, readJson, toPlain } from '../protocol/json/reader.js';
import { indentCanonical } from './indent.js';
import { LockfileError } from './lockfile.js';
import type { ToolPrint } from './print.js';
import type { Catalogs } from './catalog.js';
import type { HandshakePrint } from './handshake-print.js';
import type { LockedExtra } from './diff.js';
import type { Baseline } from '../canary/baseline.js';
import { tagged } from './hash.js';
import { explainIssues } from '../schema/issues.js';
import { ownRecord } from '../schema/own-record.js';

// warden.lock: what the warden pins beyond tools.lock v1, keyed by the same server names, rendered with the
// same discipline (RFC 8785, re-indented, one LF) so it reviews as a git diff. Per tool: the exact-number
// digest and per-field digests (so big-number drift and field attribution survive tools.lock's doubles);
// per server: the artifact digests seen when the lock was taken.

const sha = v.pipe(v.string(), v.regex(/^sha256:[0-9a-f]{64}$/, 'expected sha256:<64 hex digits>'));

const printSchema = v.strictObject({
  h_exact: sha,
  fields: ownRecord(v.string(), sha),
  h_nested_descriptions: sha,
  shapes: ownRecord(v.string(), sha),
});

const digests = ownRecord(v.string(), sha);

const handshakeSchema = v.strictObject({ h_exact: sha, fields: ownRecord(v.string(), sha) });

const baselineSchema = v.strictObject({
  tool: v.optional(v.string()),
  shape: v.union([v.strictObject({ kind: v.literal('error'), code: v.nullable(v.number()) }), v.strictObject({ kind: v.literal('result'), isError: v.boolean() })]),
  h_text: sha,
  samples: v.number(),
  p50_ms: v.number(),
  p95_ms: v.number(),
  max_ms: v.number(),
});

const serverSchema = v.strictObject({
  canaries: v.optional(ownRecord(v.string(), baselineSchema)),
  catalogs: v.strictObject({ prompts: v.optional(digests), resources: v.optional(digests), resourceTemplates: v.optional(digests) }),
  h_catalogs: sha,
  conditional: v.array(v.string()),
  /** The initialize result beside protocolVersion and instructions, as served with and without client
   *  capabilities when they differ (handshake-print.ts). Absent in entries taken before 2026-12. */
  handshake: v.optional(v.pipe(v.array(handshakeSchema), v.minLength(1), v.maxLength(2))),
  /** A server locked over the stateless flow that also serves 2025 clients: the prints of its classic initialize
   *  result, with and without client capabilities when they differ (docs/adr/0055). */
  handshake_classic: v.optional(v.pipe(v.array(handshakeSchema), v.minLength(1), v.maxLength(2))),
  artifacts: v.array(v.strictObject({ kind: v.string(), path: v.string(), sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)) })),
  tools: ownRecord(v.string(), printSchema),
  /** The hash of the server's operator rules as last pinned (`rules --pin`, or a change through `rules`). */
  h_rules: v.optional(sha),
  /** The hash of the server's sandbox as last pinned (a change through `sandbox`). */
  h_sandbox: v.optional(sha),
});

const fileSchema = v.strictObject({
  warden_lock_version: v.literal(1),
  servers: ownRecord(v.string(), serverSchema),
});

export interface WardenLockEntry {
  /** Canary baselines by probe name (mcp-warden canary record). */
  canaries?: Record<string, Baseline>;
  /** Digests of each prompt, resource and resource template, by name / uri / uriTemplate. */
  catalogs: Catalogs;
  /** Tools listed only when the client offers capabilities (roots, sampling, elicitation). */
  conditional: string[];
  /** Prints of the initialize result served at lock time (one, or two when it differed with the client's
   *  capabilities); absent in an entry taken by an earlier mcp-warden. */
  handshake?: HandshakePrint[];
  /** A hybrid locked over the stateless flow: the prints of its classic initialize result (`handshake` holds the
   *  discover result's); absent for a server of one era and in older entries. */
  classicHandshake?: HandshakePrint[];
  artifacts: { kind: string; path: string; sha256: string }[];
  tools: Record<string, ToolPrint>;
  /** rulesHash() of the server's rules when they were pinned. */
  rules?: string;
  /** sandboxHash() of the server's sandbox when it was pinned. */
  sandbox?: string;
}

export type WardenLock = Map<string, WardenLockEntry>;

export function wardenEntryFor(artifacts: WardenLockEntry['artifacts'], tools: { name: string; print: ToolPrint }[], conditional: string[], catalogs: Catalogs, handshake: HandshakePrint[] | undefined, classicHandshake?: HandshakePrint[]): WardenLockEntry {
  return { catalogs, conditional: [...conditional].sort(), ...(handshake && handshake.length > 0 ? { handshake } : {}), ...(classicHandshake && classicHandshake.length > 0 ? { classicHandshake } : {}), artifacts, tools: Object.fromEntries(tools.map((t) => [t.name, t.print])) };
}

/** What a diff needs of a server's warden.lock entry. */
export function lockedExtra(e: WardenLockEntry | undefined): LockedExtra | undefined {
  return e && { prints: e.tools, conditional: e.conditional, ...(e.handshake ? { handshake: e.handshake } : {}), ...(e.classicHandshake ? { classicHandshake: e.classicHandshake } : {}) };
}

/** The rollup over prompts, resources and resource templates. */
export function catalogsHash(c: Catalogs): string {
  return tagged(canonicalize(fromPlain(c)));
}

function plainPrint(p: ToolPrint): Record<string, unknown> {
  return { h_exact: p.hExact, fields: p.fields, h_nested_descriptions: p.hNestedDescriptions, shapes: p.shapes };
}

export function renderWardenLock(lock: WardenLock): string {
  const servers = Object.fromEntries(
    [...lock].map(([name, e]) => [name, { ...(e.canaries ? { canaries: e.canaries } : {}), catalogs: e.catalogs, h_catalogs: catalogsHash(e.catalogs), conditional: e.conditional, ...(e.handshake ? { handshake: e.handshake.map((h) => ({ h_exact: h.hExact, fields: h.fields })) } : {}), ...(e.classicHandshake ? { handshake_classic: e.classicHandshake.map((h) => ({ h_exact: h.hExact, fields: h.fields })) } : {}), artifacts: e.artifacts, tools: Object.fromEntries(Object.entries(e.tools).map(([t, p]) => [t, plainPrint(p)])), ...(e.rules ? { h_rules: e.rules } : {}), ...(e.sandbox ? { h_sandbox: e.sandbox } : {}) }]),
  );
  return indentCanonical(canonicalize(fromPlain({ warden_lock_version: 1, servers }))) + '\n';
}

function checkedCatalogs(server: string, c: Catalogs, stored: string): Catalogs {
  const clean: Catalogs = {};
  for (const k of ['prompts', 'resources', 'resourceTemplates'] as const) if (c[k]) clean[k] = c[k];
  if (catalogsHash(clean) !== stored) throw new LockfileError(`/servers/${server}/h_catalogs does not match its catalogs (the lockfile is corrupt or was edited)`);
  return clean;
}

export function parseWardenLock(bytes: Uint8Array): WardenLock {
  let plain: unknown;
  try {
    plain = toPlain(readJson(bytes, { maxBytes: 256 * 1024 * 1024, maxDepth: 64 }));
  } catch (err) {
    if (err instanceof JsonReadError) throw new LockfileError(`not valid JSON: ${err.message}`);
    throw err;
  }
  const r = v.safeParse(fileSchema, plain);
  if (!r.success) {
    const { problem, advice } = explainIssues('warden.lock', fileSchema, r.issues);
    throw new LockfileError(`${problem}. ${advice}`);
  }
  return new Map(
    Object.entries(r.output.servers).map(([name, e]) => [
      name,
      {
        ...(e.canaries ? { canaries: e.canaries } : {}),
        catalogs: checkedCatalogs(name, e.catalogs, e.h_catalogs),
        conditional: e.conditional,
        ...(e.handshake ? { handshake: e.handshake.map((h) => ({ hExact: h.h_exact, fields: h.fields })) } : {}),
        ...(e.handshake_classic ? { classicHandshake: e.handshake_classic.map((h) => ({ hExact: h.h_exact, fields: h.fields })) } : {}),
        artifacts: e.artifacts,
        tools: Object.fromEntries(Object.entries(e.tools).map(([t, p]) => [t, { hExact: p.h_exact, fields: p.fields, hNestedDescriptions: p.h_nested_descriptions, shapes: p.shapes }])),
        ...(e.h_rules ? { rules: e.h_rules } : {}),
        ...(e.h_sandbox ? { sandbox: e.h_sandbox } : {}),
      },
    ]),
  );
}
