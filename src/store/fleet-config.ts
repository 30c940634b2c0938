import path from 'node:path';
import * as v from 'valibot';
import { objectRecord } from '../schema/own-record.js';

// The `fleet` section of servers.json (docs/formats.md): where the daemon fetches signed trust bundles from, how
// often, which signer it pins, and what this machine agrees to give the bundle's servers (env values, passEnv
// names), as `bundle apply` takes them on its command line. No credentials: a URL with a user or password in it
// is refused, git uses the operator's own git configuration (docs/adr/0025-fleet-source.md).

/** Seconds between fetches: at least a minute, at most a day, 10 minutes unless set. */
export const FLEET_INTERVAL = { min: 60, max: 86_400, default: 600 };
/** Seconds a fetch may take (both files, all redirects or git invocations), 60 unless set. */
export const FLEET_TIMEOUT = { min: 1, max: 600, default: 60 };

const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|localhost)$/;

/** True for a host name (as URL.hostname has it) on this machine's loopback interface. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOST.test(hostname);
}

/** Why an http(s) URL is refused as a fleet source, or undefined. Shared by the schema and the redirect check. */
export function refusedUrl(text: string): string | undefined {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return 'expected an absolute URL';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'expected an https URL';
  if (u.protocol === 'http:' && !isLoopbackHost(u.hostname)) return 'http is allowed only for a loopback host (127.0.0.1, [::1], localhost: tests and local mirrors); use https';
  if (u.username || u.password) return 'a URL may not carry a user or password: the warden handles no credentials';
  if (u.search || u.hash || text.includes('?') || text.includes('#')) return 'a URL may not carry a query or fragment: the signature is fetched from the same URL with .sigstore.json appended';
  if (u.pathname.endsWith('/')) return 'expected the URL of the bundle file, not of a directory';
  return undefined;
}

/** Why a git remote is refused, or undefined: https, ssh (ssh://… or user@host:path), a local path or file://;
 *  http only on loopback; never a user's password, never another transport (ext::, git://). */
export function refusedRemote(remote: string): string | undefined {
  if (remote.startsWith('-')) return 'a remote may not start with "-"';
  if (/[\s\0]/.test(remote)) return 'a remote may not contain white space';
  if (path.isAbsolute(remote)) return undefined;
  if (remote.startsWith('file:///')) return undefined;
  if (remote.startsWith('ssh://')) {
    try {
      return new URL(remote).password ? 'a remote may not carry a password: the warden handles no credentials' : undefined;
    } catch {
      return 'expected a valid ssh:// URL';
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(remote)) {
    const why = refusedUrl(remote);
    return why && !why.startsWith('a URL may not carry a query') && !why.startsWith('expected the URL of the bundle') ? why : undefined;
  }
  if (/^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/]/.test(remote) || /^[A-Za-z0-9.-]+:[^:/\\]/.test(remote)) {
    return remote.includes('::') ? 'expected https://, ssh://, user@host:path or an absolute path' : undefined; // scp-like ssh
  }
  return 'expected https://, ssh://, user@host:path, file:/// or an absolute path';
}

/** A relative path inside a repository or directory: no leading "/", no "." or ".." segment, no control characters. */
const innerPath = v.pipe(
  v.string(),
  v.check((p) => p !== '' && !p.startsWith('/') && !/[\0-\x1f\x7f\\]/.test(p) && p.split('/').every((s) => s !== '' && s !== '.' && s !== '..'), 'expected a relative path of the bundle file (no leading /, no . or .. segment)'),
);

const gitRef = v.pipe(
  v.string(),
  v.check((r) => /^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$/.test(r) && !r.includes('..') && !r.includes('//') && !r.endsWith('/') && !r.endsWith('.lock'), 'expected a branch, tag or commit (letters, digits, ".", "_", "-", "/")'),
);

const sourceSchema = v.variant('type', [
  v.strictObject({
    type: v.literal('git'),
    remote: v.pipe(v.string(), v.check((r) => refusedRemote(r) === undefined, (issue) => refusedRemote(String(issue.input)) ?? 'expected a git remote')),
    path: innerPath,
    ref: v.optional(gitRef, 'HEAD'),
  }),
  v.strictObject({
    type: v.literal('url'),
    url: v.pipe(v.string(), v.check((u) => refusedUrl(u) === undefined, (issue) => refusedUrl(String(issue.input)) ?? 'expected a URL')),
  }),
  v.strictObject({
    type: v.literal('directory'),
    directory: v.pipe(v.string(), v.check((p) => path.isAbsolute(p), 'expected an absolute path')),
    path: innerPath,
  }),
]);

/** The section's schema, given servers.json's schemas of an env name and of a server id (no import cycle). */
export function fleetSchema(envName: v.GenericSchema<string, string>, serverId: v.GenericSchema<string, string>) {
  return v.pipe(
    v.strictObject({
      source: sourceSchema,
      interval: v.optional(v.pipe(v.number(), v.integer('expected whole seconds'), v.minValue(FLEET_INTERVAL.min, `expected at least ${FLEET_INTERVAL.min} seconds`), v.maxValue(FLEET_INTERVAL.max, `expected at most ${FLEET_INTERVAL.max} seconds (a day)`)), FLEET_INTERVAL.default),
      timeout: v.optional(v.pipe(v.number(), v.integer('expected whole seconds'), v.minValue(FLEET_TIMEOUT.min, `expected at least ${FLEET_TIMEOUT.min} second`), v.maxValue(FLEET_TIMEOUT.max, `expected at most ${FLEET_TIMEOUT.max} seconds`)), FLEET_TIMEOUT.default),
      key: v.optional(v.pipe(v.string(), v.check((p) => path.isAbsolute(p), 'expected the absolute path of the public key (PEM)'))),
      identity: v.optional(v.pipe(v.string(), v.minLength(1, 'expected the signer SAN pattern'))),
      issuer: v.optional(v.pipe(v.string(), v.url('expected the OIDC issuer URL'))),
      env: v.optional(objectRecord(serverId, objectRecord(envName, v.string())), {}),
      passEnv: v.optional(objectRecord(serverId, v.array(envName)), {}),
    }),
    v.check((f) => (f.key !== undefined) !== (f.identity !== undefined || f.issuer !== undefined), 'give the pinned signer: "key" (a public key file), or "identity" with "issuer" (keyless), not both'),
    v.check((f) => f.key !== undefined || (f.identity !== undefined && f.issuer !== undefined), '"identity" and "issuer" go together: the signer SAN pattern (anchored; * matches any run) and the exact OIDC issuer URL'),
  );
}

export type FleetConfig = v.InferOutput<ReturnType<typeof fleetSchema>>;
export type FleetSource = FleetConfig['source'];

/** How a source is named in messages and the audit log (no credentials can be in it: the schema refuses them). */
export function describeSource(s: FleetSource): string {
  if (s.type === 'git') return `git ${s.remote} ${s.ref}:${s.path}`;
  if (s.type === 'url') return s.url;
  return path.join(s.directory, s.path);
}
