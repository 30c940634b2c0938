import path from 'node:path';
import * as v from 'valibot';
import { fromPlain } from '../protocol/json/canonical.js';
import { hashOf } from '../surface/hash.js';

// The `sandbox` object of a server in servers.json (DESIGN.md "Confinement"; docs/guide.md "Confining a
// server"): what the server may read of the user's home, where it may write besides its data directory, and
// which network it has. Or the string "unconfined": the operator's explicit, audited choice to run it without
// one. Bounded and normalized here; what each path may not overlap (the warden's home, the server's own files)
// is judged at launch, where those are known (sandbox/plan.ts).

export const NETWORKS = ['none', 'loopback', 'any'] as const;
export type NetworkLevel = (typeof NETWORKS)[number];
/** At most this many paths in each list and domains in `network.domains`. */
export const MAX_ENTRIES = 64;
const MAX_PATH = 4096;

/** Why `p` is not an absolute, normalized path the sandbox can name exactly, or undefined. */
export function pathProblem(p: string): string | undefined {
  if (p.length === 0 || p.length > MAX_PATH) return `expected a path of 1 to ${MAX_PATH} characters`;
  if (!path.isAbsolute(p)) return 'expected an absolute path';
  if (/[\0-\x1f\x7f]/.test(p)) return 'expected a path without control characters';
  if (path.posix.normalize(p) !== p || (p.length > 1 && p.endsWith('/'))) return `expected a normalized path (${path.posix.normalize(p).replace(/(.)\/$/, '$1')}): no '.', '..', '//' or trailing '/'`;
  if (p === '/') return "expected a path below '/' (the root is never granted whole)";
  return undefined;
}

/** Why `d` is not a well-formed domain name (letters, digits and hyphens in dot-separated labels), or undefined.
 *  Exact names only: the contract (DESIGN.md "Confinement") lists names, so `*.example.com` is not one. */
export function domainProblem(d: string): string | undefined {
  if (d.startsWith('*.')) return 'expected an exact domain name: a wildcard (*.) is not granted, list each name';
  if (d.length === 0 || d.length > 253) return 'expected a domain name of 1 to 253 characters';
  const labels = d.split('.');
  if (labels.length < 2) return 'expected a domain name with at least two labels (example.com), or localhost:PORT';
  if (!labels.every((l) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l))) return 'expected lower-case letters, digits and inner hyphens in each label of at most 63 characters';
  if (/^[0-9]+$/.test(labels[labels.length - 1] as string)) return 'expected a domain name, not an address';
  return undefined;
}

/** The ports a name without one is granted: HTTPS and HTTP. */
export const DEFAULT_PORTS: readonly number[] = [443, 80];

/** A `network.domains` entry as what the proxy admits: `name` (ports 443 and 80), `name:PORT` (that port only),
 *  or `localhost:PORT` (that port of the host's loopback: a port is required). */
export interface DomainGrant {
  host: string;
  ports: readonly number[];
}

/** The grant an entry names, or why it names none. */
export function parseDomainGrant(entry: string): DomainGrant | { problem: string } {
  const m = /^(.*?)(?::([0-9]{1,5}))?$/.exec(entry) as RegExpExecArray;
  const host = m[1] as string;
  const port = m[2] === undefined ? undefined : Number(m[2]);
  if (port !== undefined && (port < 1 || port > 65535 || String(port) !== m[2])) return { problem: 'expected a port from 1 to 65535 without leading zeros' };
  if (host === 'localhost') return port === undefined ? { problem: "expected localhost with a port (localhost:8080): the host's loopback is granted one port at a time" } : { host, ports: [port] };
  const problem = domainProblem(host);
  return problem !== undefined ? { problem } : { host, ports: port === undefined ? DEFAULT_PORTS : [port] };
}

const grantProblem = (d: string): string | undefined => {
  const g = parseDomainGrant(d);
  return 'problem' in g ? g.problem : undefined;
};

const grantPath = v.pipe(v.string(), v.check((p) => pathProblem(p) === undefined, (issue) => pathProblem(String(issue.input)) ?? 'expected a path'));
const pathList = v.pipe(
  v.array(grantPath),
  v.maxLength(MAX_ENTRIES, `expected at most ${MAX_ENTRIES} paths`),
  v.check((a) => new Set(a).size === a.length, 'a path is listed twice'),
);
const domain = v.pipe(v.string(), v.check((d) => grantProblem(d) === undefined, (issue) => grantProblem(String(issue.input)) ?? 'expected a domain name'));

export const confinementSchema = v.strictObject({
  /** none: no network outside the sandbox; loopback: the sandbox's own loopback only; any: the host's network;
   *  domains: the names listed (and localhost:PORT entries), through the warden's proxy only (sandbox/egress.ts). */
  network: v.union(
    [
      v.picklist(NETWORKS),
      v.strictObject({
        domains: v.pipe(v.array(domain), v.minLength(1, 'expected at least one domain'), v.maxLength(MAX_ENTRIES, `expected at most ${MAX_ENTRIES} domains`), v.check((a) => new Set(a).size === a.length, 'a domain is listed twice')),
      }),
    ],
    `expected ${NETWORKS.join(', ')} or { "domains": [...] }`,
  ),
  /** Directories (or files) the server may write besides its data directory and its private /tmp. */
  write: v.optional(pathList, []),
  read: v.optional(
    v.strictObject({
      /** Parts of the user's home the server may read. */
      allow: v.optional(pathList, []),
      /** Paths hidden from the server besides the homes, the warden's home and the other stores. */
      deny: v.optional(pathList, []),
    }),
    () => ({ allow: [], deny: [] }),
  ),
});

/** The `sandbox` member: a confinement, or "unconfined" (an explicit, audited choice). */
export const sandboxSchema = v.union([v.literal('unconfined'), confinementSchema], 'expected "unconfined" or { "network": ..., "write": [...], "read": { "allow": [...], "deny": [...] } }');

export type Confinement = v.InferOutput<typeof confinementSchema>;
export type Sandbox = v.InferOutput<typeof sandboxSchema>;

/** Parses a sandbox value (throws valibot's ValiError). */
export function parseSandbox(input: unknown): Sandbox {
  return v.parse(sandboxSchema, input);
}

/** What warden.lock pins (`h_sandbox`): the tagged sha256 of the sandbox's RFC 8785 form with the defaults
 *  filled in, so that writing a default out is not a change. */
export function sandboxHash(sandbox: Sandbox): string {
  return hashOf(fromPlain(sandbox));
}
