import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ARTIFACT_KINDS } from '../../src/attest/plan.js';
import { WardenError } from '../../src/error.js';
import { checkShared } from '../../src/fleet/unnamed-runs.js';
import type { AllowlistFile } from '../../src/store/allowlist.js';

// The one exception bundle apply makes for a path a server it does not name runs (docs/adr/0041): the bundle may
// carry it only with exactly the digest, under exactly the kind, this machine's allowlist holds. Near misses
// (one hex digit, another kind, no entry) are refused; a path no such server runs, or one left to this machine
// (machine-local), is not this check's.

const P = '/opt/own/server.mjs';
const H = 'a'.repeat(64);
const allowlist: AllowlistFile = { version: 1, entries: [{ path: P, kind: 'script', sha256: H, addedAt: '2026-12-01T00:00:00.000Z' }] } as AllowlistFile;
const runBy = new Map([[P, ['own']]]);
const hex = fc.constantFrom(...'0123456789abcdef');
/** H itself, or H with one digit changed. */
const digest = fc.oneof(fc.constant(H), fc.tuple(fc.nat(63), hex).filter(([, c]) => c !== 'a').map(([i, c]) => H.slice(0, i) + c + H.slice(i + 1)));

function outcome(path: string, kind: (typeof ARTIFACT_KINDS)[number], sha256: string, machineLocal = false): string {
  const artifact = machineLocal ? { path, kind, machineLocal: true as const } : { path, kind, accept: [sha256] };
  try {
    checkShared([{ artifact, sha256 }], allowlist, runBy, 'b.json');
    return 'admitted';
  } catch (err) {
    if (err instanceof WardenError) return err.code;
    throw err;
  }
}

describe('a bundle artifact at a path a server it does not name runs', () => {
  it('is admitted only with the digest and kind the allowlist holds there; any other is BUNDLE_ARTIFACT_SHARED', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ARTIFACT_KINDS), digest, (kind, sha256) => {
        expect(outcome(P, kind, sha256)).toBe(kind === 'script' && sha256 === H ? 'admitted' : 'BUNDLE_ARTIFACT_SHARED');
      }),
    );
  });

  it('left to this machine (machine-local), or at a path no such server runs, is not refused by it', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ARTIFACT_KINDS), digest, fc.string({ minLength: 1, maxLength: 20 }), (kind, sha256, tail) => {
        expect(outcome(P, kind, sha256, true)).toBe('admitted');
        fc.pre(`/opt/own/${tail}` !== P);
        expect(outcome(`/opt/own/${tail}`, kind, sha256)).toBe('admitted');
      }),
    );
  });
});
