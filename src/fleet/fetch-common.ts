import type { Sandbox } from '../sandbox/schema.js';
import { WardenError } from '../error.js';

// What the fetchers of a fleet source share (fleet/fetch.ts): the caps, the two files, the refusals.

/** The most a bundle file may hold (the bundle format's own limit, store/bundle/format.ts). */
export const MAX_FETCHED_BUNDLE_BYTES = 64 * 1024 * 1024;
/** The most its signature may hold: a keyless sigstore bundle with its certificate chain is a few KiB. */
export const MAX_FETCHED_SIGNATURE_BYTES = 1024 * 1024;

export interface Fetched {
  bundle: Buffer;
  signature: Buffer;
}

export interface FetchContext {
  /** Aborted at the deadline (reason 'timeout') or when the daemon stops. */
  signal: AbortSignal;
  /** A private, empty directory of the caller's (owner-only) for what a fetch must put on disk (git). */
  scratch: string;
  /** servers.json's trusted PATH: where `git` is looked up. */
  trustedPath: string;
  /** Every server's sandbox: git is never taken where a write grant reaches (sandbox/engine.ts trustedProgram). */
  sandboxes: Record<string, Sandbox | undefined>;
}

/** What each fetcher reads: the two files and their caps. */
export const FILES = [
  { what: 'trust bundle', suffix: '', max: MAX_FETCHED_BUNDLE_BYTES },
  { what: 'signature', suffix: '.sigstore.json', max: MAX_FETCHED_SIGNATURE_BYTES },
] as const;

export function sourceInsecure(p: string, what: string, mode: number, why: string): WardenError {
  const who = [mode & 0o020 ? 'its group' : '', mode & 0o002 ? 'others' : ''].filter(Boolean).join(' and ');
  return new WardenError('BUNDLE_SOURCE_INSECURE', `the ${what} ${p} is writable by ${who} (mode ${(mode & 0o7777).toString(8).padStart(4, '0')}), so ${why}; nothing was changed. Run: chmod go-w ${p}`);
}

export function tooLarge(where: string, what: string, max: number, size?: number): WardenError {
  return new WardenError('BUNDLE_TOO_LARGE', `the ${what} at ${where} is ${size !== undefined ? `${size} bytes, ` : ''}larger than ${max} bytes, the most the daemon fetches; nothing was changed. Publish a smaller one (bundle create --servers ...), or check what the source serves.`);
}

export function fetchFailed(where: string, why: string): WardenError {
  return new WardenError('BUNDLE_FETCH_FAILED', `could not fetch from the fleet source ${where}: ${why}; nothing was changed, the last applied bundle stays in force. Check that the source is reachable from this machine and serves the bundle and its .sigstore.json.`);
}

/** The refusal for an aborted fetch: the deadline, or the daemon stopping. */
export function abortedError(signal: AbortSignal, where: string, seconds: number): WardenError {
  if (signal.reason === 'timeout') return new WardenError('BUNDLE_FETCH_TIMEOUT', `fetching from the fleet source ${where} took longer than ${seconds} s (fleet.timeout in servers.json) and was stopped; nothing was changed, the last applied bundle stays in force. Check the source, or raise fleet.timeout.`);
  return fetchFailed(where, 'the daemon is stopping');
}
