import type { Progress } from './progress.js';
import { WardenError } from '../error.js';
import { loadLocks } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { checkCanaries } from '../supervise/canaries.js';
import type { Recorder } from '../supervise/recorder.js';
import { checkSurface } from '../supervise/surface-check.js';

// Scheduled out-of-band verification of one server: re-attest, fresh launch, surface verify, canaries. One at
// a time per server; each is a task the watchdog bounds.

/** Longer than any honest verification (two launches, a listing, a handful of canary calls, each bounded). */
export const MAX_VERIFICATION_MS = 10 * 60_000;

export interface VerificationResult {
  at: string;
  /** The surface as verified: matched, drift, or failed (no surface could be fetched). */
  surface: 'matched' | 'drift' | 'failed';
  /** The error code of a failed verification, or the worst drift class. */
  detail?: string;
}

export function scheduledVerifier(
  paths: HomePaths,
  known: (id: string) => boolean,
  rec: Recorder,
  say: (m: string) => void,
  progress: Progress,
  onResult: (id: string, r: VerificationResult) => void,
): (id: string) => Promise<void> {
  const busy = new Set<string>();
  return async (id) => {
    if (busy.has(id) || !known(id)) return;
    busy.add(id);
    const done = progress.begin(`verification of '${id}'`, MAX_VERIFICATION_MS);
    try {
      const o = await checkSurface(paths, id);
      if (o.error) {
        say(`scheduled verification of '${id}' failed: ${o.error.message}`);
        rec.record({ event: 'verify_failed', server: id, code: o.error.code, reason: o.error.message });
        onResult(id, { at: new Date().toISOString(), surface: 'failed', detail: o.error.code });
        return;
      }
      const changed = (o.diff?.tools ?? []).filter((t) => t.state !== 'matched').map((t) => ({ name: t.name, state: t.state as 'changed' | 'added' | 'removed', classes: t.classes, fields: t.fields }));
      rec.record({ event: 'surface', server: id, source: 'verify', pinState: o.status === 'drift' ? 'changed' : 'matched', surfaceHash: o.liveSurfaceHash ?? '', ...(o.entry ? { lockedSurfaceHash: o.entry.surface_hash, lockedRevision: o.entry.protocol.era } : {}), revision: o.diff?.era?.live ?? o.entry?.protocol.era ?? '', changed });
      onResult(id, { at: new Date().toISOString(), surface: o.status === 'drift' ? 'drift' : 'matched', ...(o.status === 'drift' && o.worst ? { detail: o.worst } : {}) });
      if (o.status === 'drift') say(`scheduled verification of '${id}': DRIFT (${o.worst}). Review with: mcp-warden diff ${id}`);
      if (loadLocks(paths).warden.get(id)?.canaries) await checkCanaries(paths, id, rec, 'schedule');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      say(`scheduled verification of '${id}' failed: ${message}`);
      const code = err instanceof WardenError ? err.code : 'INTERNAL';
      rec.record({ event: 'verify_failed', server: id, code, reason: message });
      onResult(id, { at: new Date().toISOString(), surface: 'failed', detail: code });
    } finally {
      done();
      busy.delete(id);
    }
  };
}
