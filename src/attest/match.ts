import type { Artifact, ArtifactKind } from './plan.js';

// Every artifact of a launch must be allowlisted at its realpath with its digest. A path with an unexpected
// digest is refused; so is a known digest at an unexpected path (a copy moved somewhere it was not reviewed).

export interface AllowedArtifact {
  path: string;
  kind: ArtifactKind;
  sha256: string;
}

export type ArtifactVerdict =
  | { state: 'allowed'; artifact: Artifact }
  | { state: 'not_allowlisted'; artifact: Artifact }
  | { state: 'digest_mismatch'; artifact: Artifact; expected: string }
  | { state: 'digest_at_other_path'; artifact: Artifact; allowedPath: string };

export interface Attestation {
  allowed: boolean;
  verdicts: ArtifactVerdict[];
}

/** Checks each artifact against the allowlist entries. */
export function matchAllowlist(artifacts: Artifact[], entries: readonly AllowedArtifact[]): Attestation {
  const verdicts = artifacts.map((artifact): ArtifactVerdict => {
    const atPath = entries.filter((e) => e.path === artifact.path && e.kind === artifact.kind);
    if (atPath.some((e) => e.sha256 === artifact.sha256)) return { state: 'allowed', artifact };
    const first = atPath[0];
    if (first) return { state: 'digest_mismatch', artifact, expected: first.sha256 };
    const elsewhere = entries.find((e) => e.sha256 === artifact.sha256 && e.kind === artifact.kind);
    if (elsewhere) return { state: 'digest_at_other_path', artifact, allowedPath: elsewhere.path };
    return { state: 'not_allowlisted', artifact };
  });
  return { allowed: verdicts.every((v) => v.state === 'allowed'), verdicts };
}

/** One sentence for the first refused artifact: what was seen, what was expected. */
export function refusalReason(att: Attestation): { code: 'NOT_ALLOWLISTED' | 'DIGEST_MISMATCH' | 'DIGEST_AT_OTHER_PATH'; text: string } | undefined {
  const v = att.verdicts.find((x) => x.state !== 'allowed');
  if (!v) return undefined;
  const a = v.artifact;
  switch (v.state) {
    case 'not_allowlisted':
      return { code: 'NOT_ALLOWLISTED', text: `${a.kind} ${a.path} (sha256 ${a.sha256}) is not in the allowlist` };
    case 'digest_mismatch':
      return { code: 'DIGEST_MISMATCH', text: `${a.kind} ${a.path} changed: expected sha256 ${v.expected}, got ${a.sha256}` };
    case 'digest_at_other_path':
      return { code: 'DIGEST_AT_OTHER_PATH', text: `${a.kind} ${a.path} has the digest allowlisted for ${v.allowedPath}, not for this path` };
    default:
      return undefined;
  }
}
