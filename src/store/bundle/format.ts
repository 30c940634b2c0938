import * as v from 'valibot';
import { WardenError } from '../../error.js';
import { canonicalize, fromPlain } from '../../protocol/json/canonical.js';
import { JsonNumber, JsonReadError, readJson, toPlain, type JsonObject, type JsonValue } from '../../protocol/json/reader.js';
import { explainIssues } from '../../schema/issues.js';
import { ownRecord } from '../../schema/own-record.js';
import { indentCanonical } from '../../surface/indent.js';
import { LockfileError, parseToolsLock, renderToolsLock, type ToolsLock } from '../../surface/lockfile.js';
import { parseWardenLock, renderWardenLock, type WardenLock } from '../../surface/warden-lock.js';
import { ARTIFACT_KINDS } from '../../attest/plan.js';
import { rulesHash } from '../../rules/schema.js';
import { sandboxHash } from '../../sandbox/schema.js';
import { inexactNumber } from '../json-file.js';
import { envName, serverSchema, SERVER_ID_RE } from '../servers.js';
import { bundlePackageSchema, packagesProblem, type BundlePackage } from './packages.js';
import { isStoreRef } from './store-refs.js';

// A trust bundle, bundle_version 1 (docs/formats.md "Trust bundles", docs/adr/0023-trust-bundles.md): what a
// reviewed setup is, for other machines to apply. Rendered like the locks (RFC 8785 of the whole document,
// re-indented, one LF), so the same content is the same bytes and the signature covers exactly that. Read
// strictly: unknown keys, a lock entry whose hashes do not add up, a server without its locks are refused.

const MAX_BUNDLE_BYTES = 64 * 1024 * 1024;
const sha256Hex = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex digits'));
/** An absolute path, or a path inside a carried store entry (`store:<entry>/<path>`, checked with the packages). */
const absolute = v.pipe(v.string(), v.check((p) => p.startsWith('/') || isStoreRef(p), 'expected an absolute path or a store path'));

/** A server's entry as servers.json has it, without env values: only their names travel. Its paths inside the
 *  store are store paths (store-refs.ts). */
const bundleServerSchema = v.strictObject({
  ...v.omit(serverSchema, ['env']).entries,
  cwd: v.optional(absolute),
  modules: v.optional(v.array(absolute)),
  envNames: v.array(envName),
});

/** An artifact the bundle's servers run: accepted as one of a set of digests, or left to each machine's own allowlist. */
const artifactSchema = v.union([
  v.strictObject({ path: absolute, kind: v.picklist(ARTIFACT_KINDS), accept: v.pipe(v.array(sha256Hex), v.minLength(1, 'expected at least one digest')) }),
  v.strictObject({ path: absolute, kind: v.picklist(ARTIFACT_KINDS), machineLocal: v.literal(true) }),
]);

const plainSchema = v.strictObject({
  bundle_version: v.literal(1),
  serial: v.pipe(v.number(), v.integer('expected an integer'), v.minValue(1, 'expected at least 1'), v.maxValue(Number.MAX_SAFE_INTEGER, 'expected at most 2^53-1')),
  createdAt: v.pipe(v.string(), v.isoTimestamp('expected an ISO 8601 timestamp')),
  servers: ownRecord(v.pipe(v.string(), v.regex(SERVER_ID_RE, 'expected a server id')), bundleServerSchema),
  artifacts: v.array(artifactSchema),
  /** The store entries the servers were installed into, by name (packages.ts); absent when none. */
  packages: v.optional(ownRecord(v.pipe(v.string(), v.regex(/^[^./][^/]*$/, 'expected a store entry name')), bundlePackageSchema), {}),
});

export type BundleServer = v.InferOutput<typeof bundleServerSchema>;
export type BundleArtifact = v.InferOutput<typeof artifactSchema>;

export interface TrustBundle {
  serial: number;
  createdAt: string;
  servers: Record<string, BundleServer>;
  artifacts: BundleArtifact[];
  /** The store entries of servers installed into the store, by entry name (docs/adr/0029). */
  packages: Record<string, BundlePackage>;
  /** The servers' tools.lock entries, rendered in the bundle as tools.lock renders them. */
  tools: ToolsLock;
  /** The servers' warden.lock entries, likewise. */
  warden: WardenLock;
}

/** The `servers` object of a rendered lock, as a lossless value (its numbers keep the lock's own text). */
function lockServers(rendered: string): JsonValue {
  const doc = readJson(rendered, { maxBytes: MAX_BUNDLE_BYTES, maxDepth: 128 }) as JsonObject;
  return doc.get('servers') ?? new Map();
}

/** The bundle's bytes: the same content renders to the same bytes on every machine. */
export function renderBundle(b: TrustBundle): string {
  const artifacts = [...b.artifacts].sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : x.kind < y.kind ? -1 : 1));
  const packages = Object.keys(b.packages).length > 0 ? { packages: b.packages } : {};
  const doc = fromPlain({ bundle_version: 1, serial: b.serial, createdAt: b.createdAt, servers: b.servers, artifacts, ...packages }) as JsonObject;
  doc.set('toolsLock', lockServers(renderToolsLock(b.tools)));
  doc.set('wardenLock', lockServers(renderWardenLock(b.warden)));
  return indentCanonical(canonicalize(doc)) + '\n';
}

function invalid(file: string, problem: string): WardenError {
  return new WardenError('BUNDLE_INVALID', `the trust bundle ${file} is not a valid bundle_version 1 file: ${problem}. Ask for a new bundle from 'mcp-warden bundle create'; nothing was changed.`);
}

/** Reads a bundle's bytes strictly; every refusal names the file and the JSON pointer of the problem. */
export function parseBundle(bytes: Uint8Array, file: string): TrustBundle {
  if (bytes.byteLength > MAX_BUNDLE_BYTES) throw invalid(file, `it is larger than ${MAX_BUNDLE_BYTES} bytes`);
  let root: JsonValue;
  try {
    root = readJson(bytes, { maxBytes: MAX_BUNDLE_BYTES, maxDepth: 128 });
  } catch (err) {
    if (err instanceof JsonReadError) throw invalid(file, `not valid JSON (${err.message})`);
    throw err;
  }
  if (!(root instanceof Map)) throw invalid(file, 'the document is not an object');
  const rest: JsonObject = new Map(root);
  const toolsValue = rest.get('toolsLock');
  const wardenValue = rest.get('wardenLock');
  if (toolsValue === undefined) throw invalid(file, "missing key 'toolsLock' at /");
  if (wardenValue === undefined) throw invalid(file, "missing key 'wardenLock' at /");
  rest.delete('toolsLock');
  rest.delete('wardenLock');
  const inexact = inexactNumber(rest);
  if (inexact) throw invalid(file, `the number at ${inexact.at} (${inexact.lexeme.slice(0, 40)}) is not one a double holds as written`);
  const parsed = v.safeParse(plainSchema, toPlain(rest));
  if (!parsed.success) {
    const { problem } = explainIssues('the bundle', plainSchema, parsed.issues);
    throw invalid(file, problem);
  }
  const asLock = (version: string, servers: JsonValue): string => canonicalize(new Map<string, JsonValue>([[version, new JsonNumber('1')], ['servers', servers]]));
  let tools: ToolsLock;
  let warden: WardenLock;
  try {
    tools = parseToolsLock(asLock('lockfile_version', toolsValue));
  } catch (err) {
    if (err instanceof LockfileError) throw invalid(file, `/toolsLock: ${err.reason.replace(/^\/servers/, '')}`);
    throw err;
  }
  try {
    warden = parseWardenLock(Buffer.from(asLock('warden_lock_version', wardenValue)));
  } catch (err) {
    if (err instanceof LockfileError) throw invalid(file, `/wardenLock: ${err.reason}`);
    throw err;
  }
  const b: TrustBundle = { ...parsed.output, tools, warden };
  checkConsistent(b, file);
  return b;
}

/** Every server has both lock entries and nothing else has any; every artifact its lock names is in the bundle,
 *  once, and the bundle carries no artifact its servers do not run. */
function checkConsistent(b: TrustBundle, file: string): void {
  const ids = Object.keys(b.servers).sort();
  for (const [name, keys] of [['toolsLock', [...b.tools.keys()]], ['wardenLock', [...b.warden.keys()]]] as const) {
    const extra = keys.filter((k) => !ids.includes(k));
    const missing = ids.filter((k) => !keys.includes(k));
    if (extra.length) throw invalid(file, `/${name} has an entry for '${extra[0]}', which is not among its servers`);
    if (missing.length) throw invalid(file, `/${name} has no entry for server '${missing[0]}'`);
  }
  // A server's rules and sandbox are what its warden.lock entry pins, as on the machine that made the bundle: one
  // that is not would run there with rules the signer's setup never pinned, or refuse its launches.
  for (const id of ids) {
    const server = b.servers[id] as BundleServer;
    const extra = b.warden.get(id);
    const rules = server.rules ? rulesHash(server.rules) : undefined;
    const sandbox = server.sandbox !== undefined ? sandboxHash(server.sandbox) : undefined;
    if (rules !== extra?.rules) throw invalid(file, `server '${id}' carries ${rules ? 'rules' : 'no rules'} while its /wardenLock entry pins ${extra?.rules ? 'other rules' : 'none'} (h_rules): its rules are not the ones its setup pinned`);
    if (sandbox !== extra?.sandbox) throw invalid(file, `server '${id}' carries ${sandbox ? 'a sandbox' : 'no sandbox'} while its /wardenLock entry pins ${extra?.sandbox ? 'another' : 'none'} (h_sandbox): its sandbox is not the one its setup pinned`);
  }
  const seen = new Set<string>();
  for (const a of b.artifacts) {
    const key = `${a.kind} ${a.path}`;
    if (seen.has(key)) throw invalid(file, `/artifacts names ${a.kind} ${a.path} twice`);
    seen.add(key);
  }
  const named = new Set<string>();
  for (const [id, e] of b.warden) {
    for (const a of e.artifacts) {
      if (!seen.has(`${a.kind} ${a.path}`)) throw invalid(file, `/wardenLock/${id} names the ${a.kind} ${a.path}, which /artifacts does not carry`);
      named.add(`${a.kind} ${a.path}`);
    }
  }
  // An artifact no server of the bundle runs would be allowlisted for whatever else runs it on the machine: a
  // bundle would re-trust the files of servers it does not name.
  const stray = b.artifacts.find((a) => !named.has(`${a.kind} ${a.path}`));
  if (stray) throw invalid(file, `/artifacts carries the ${stray.kind} ${stray.path}, which no server of the bundle runs (its warden.lock entries name the artifacts they run)`);
  const problem = packagesProblem(b);
  if (problem) throw invalid(file, problem);
}
