// Audit events of the first-trust scan (issue 30): codes, severities, item kinds and names, JSON pointers, never
// the text a finding is about (it is attacker-controlled).

export interface SurfaceFindingsEvent {
  event: 'surface_findings';
  server: string;
  /** What scanned: a capture for `lock`/`pin` (and enrollment), or the `scan` verb. */
  source: 'lock' | 'pin' | 'scan';
  /** The scan rules' version (src/scan/rules.ts). */
  rules: number;
  /** At most 100 listed; `count` has them all. */
  findings: { code: string; severity: string; kind: string; item: string; pointer: string }[];
  count: number;
  /** The codes of high-severity findings the operator accepted with --accept-findings. */
  accepted: string[];
  /** 'refused': nothing was locked; 'locked': locked with what was found (accepted, below high, or monitor). */
  decision: 'refused' | 'locked' | 'reported';
}
