import { WardenError } from '../error.js';
import type { Sandbox } from '../sandbox/schema.js';
import { describeSource, type FleetSource } from '../store/fleet-config.js';
import { fetchFromDirectory } from './fetch-directory.js';
import { fetchFromGit } from './fetch-git.js';
import { fetchFromUrl } from './fetch-https.js';
import { abortedError, fetchFailed, type FetchContext, type Fetched } from './fetch-common.js';

// Fetching a trust bundle and its signature (FILE and FILE.sigstore.json) from a fleet source: a git remote, an
// https URL, a directory. Nothing fetched is trusted: the bytes only go on to signature verification
// (fleet/apply.ts). What is bounded here is what a hostile or broken source could make the daemon spend: time
// (one deadline for everything a fetch does) and memory (a cap per file, checked before and while reading).

/** Fetches the bundle and its signature within `timeoutSeconds`; `stop` aborts it early (the daemon stopping). */
export async function fetchBundle(source: FleetSource, timeoutSeconds: number, scratch: string, lookup: { trustedPath: string; sandboxes: Record<string, Sandbox | undefined> }, stop: AbortSignal): Promise<Fetched> {
  const where = describeSource(source);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort('timeout'), timeoutSeconds * 1000);
  const onStop = (): void => controller.abort('stopped');
  stop.addEventListener('abort', onStop, { once: true });
  if (stop.aborted) onStop();
  const ctx: FetchContext = { signal: controller.signal, scratch, ...lookup };
  try {
    const fetching = source.type === 'git' ? fetchFromGit(source, ctx) : source.type === 'url' ? fetchFromUrl(source.url, ctx) : fetchFromDirectory(source, ctx);
    // Whatever a fetcher is stuck in (a read on a hung mount cannot be cancelled), the deadline ends the wait.
    const aborted = new Promise<never>((_, reject) => {
      const fail = (): void => reject(abortedError(controller.signal, where, timeoutSeconds));
      if (controller.signal.aborted) fail();
      else controller.signal.addEventListener('abort', fail, { once: true });
    });
    aborted.catch(() => undefined);
    return await Promise.race([fetching, aborted]);
  } catch (err) {
    if (controller.signal.aborted) throw abortedError(controller.signal, where, timeoutSeconds);
    if (err instanceof WardenError) throw err;
    throw fetchFailed(where, (err as Error).message);
  } finally {
    clearTimeout(timer);
    controller.abort('done'); // a request or git still running for the other file ends now
    stop.removeEventListener('abort', onStop);
  }
}
