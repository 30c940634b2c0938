// The audit events (contract: names and fields are relied on by users' scripts). Never descriptions, schema
// bodies or annotation values: those are attacker-controlled text.

export interface ArtifactRecord {
  kind: string;
  path: string;
  sha256: string;
  chain: string[];
}

export interface LaunchEvent {
  event: 'launch';
  server: string;
  decision: 'allow' | 'refuse';
  reason: string;
  code?: string;
  resolvedPath?: string;
  chain?: string[];
  artifacts?: ArtifactRecord[];
  argv?: string[];
  envNames?: string[];
  pid?: number;
  pgid?: number;
}

export interface ExitEvent {
  event: 'exit';
  server: string;
  pid: number;
  pgid: number;
  cause: 'client_eof' | 'server_exit' | 'signal' | 'protocol_error' | 'verification_failed';
  exitCode: number | null;
  signal: string | null;
  stoppedBy: 'exited' | 'sigterm' | 'sigkill';
  groupGone: boolean;
  nonJsonLines: number;
  oversizeLines: number;
  refusedClientLines: number;
  durationMs: number;
}

export interface OrphanKilledEvent {
  event: 'orphan_killed';
  server: string;
  pgid: number;
  pids: number[];
  gone: boolean;
}

export interface EnrollEvent {
  event: 'allowlist_changed';
  action: 'add' | 'remove' | 'replace';
  path: string;
  kind: string;
  sha256: string;
  previousSha256?: string;
  trustOnFirstUse?: boolean;
  by: string;
}

export type AuditEvent = LaunchEvent | ExitEvent | OrphanKilledEvent | EnrollEvent;
