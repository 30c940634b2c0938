import type { BundleEvent } from './bundle-events.js';
import type { RulesEvent } from './rules-events.js';
import type { SurfaceFindingsEvent } from './scan-events.js';
import type { SandboxEvent } from './sandbox-events.js';
import type { PackageInstalledEvent, PackageUpgradedEvent, TrustOverrideEvent, UnsignedAdmittedEvent } from './package-events.js';

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
  /** The server's sandbox: confined (network level, the pinned hash, the engine, how many decoys it placed:
   *  sandbox/decoys.ts; whether its denied writes are observed, and why not: sandbox/write-trace.ts), explicitly unconfined, or none declared. */
  sandbox?: { state: 'unconfined' | 'none' } | { state: 'confined'; network: string; hash: string; engine: string; domains?: string[]; decoys?: number; writes?: 'observed' | 'guard' | 'unobserved' | 'off'; writesWhy?: string };
  /** A confined server's own pid (pid and pgid are the sandbox engine's, the leader of its group). */
  serverPid?: number;
}

export interface ExitEvent {
  event: 'exit';
  server: string;
  pid: number;
  pgid: number;
  cause: 'client_eof' | 'server_exit' | 'signal' | 'protocol_error' | 'verification_failed' | 'surface_refused' | 'inadmissible';
  exitCode: number | null;
  signal: string | null;
  stoppedBy: 'exited' | 'sigterm' | 'sigkill';
  /** True only when the process group and every descendant found outside it are gone. */
  groupGone: boolean;
  /** How many processes outside the server's process group were found and stopped, and their pids. */
  escaped: number;
  escapedPids: number[];
  /** The mechanisms that applied: 'group', 'cgroup' (where the host let the warden make one), 'marker', 'tree'. */
  containment: string[];
  nonJsonLines: number;
  oversizeLines: number;
  refusedClientLines: number;
  /** Messages from the server that were not forwarded (answers to no waiting request, batches). */
  refusedServerMessages?: number;
  /** Pages of the client's tools/list the warden refused as inadmissible (recorded one by one up to a cap). */
  refusedPages?: number;
  durationMs: number;
}

export interface OrphanKilledEvent {
  event: 'orphan_killed';
  server: string;
  pgid: number;
  pids: number[];
  gone: boolean;
  escaped: number;
  escapedPids: number[];
  containment: string[];
}

/** A run record (or run/ itself) another user could have written: never acted on. */
export interface RunRecordRefusedEvent {
  event: 'run_record_refused';
  file: string;
  reason: string;
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

export interface ToolChangeRecord {
  name: string;
  state: 'changed' | 'added' | 'removed';
  classes: string[];
  /** Names of the fields that changed, never their values. */
  fields: string[];
  decision?: string;
}

export interface SurfaceEvent {
  event: 'surface';
  server: string;
  source: 'handshake' | 'relist' | 'client_list' | 'lock' | 'pin' | 'verify' | 'upgrade';
  pinState: 'unpinned' | 'matched' | 'changed';
  /** The live surface hash (tools.lock rollup) and the locked one. */
  surfaceHash: string;
  lockedSurfaceHash?: string;
  revision: string;
  lockedRevision?: string;
  instructionsChanged?: boolean;
  /** The rest of the initialize result, when not proven equal to the lock: 'unlocked', or the names of the
   *  members that changed (never their values). */
  handshake?: { state: 'changed' | 'unlocked'; fields: string[] };
  changed: ToolChangeRecord[];
}

export interface TierWideningEvent {
  event: 'tier_widening_blocked';
  server: string;
  tool: string;
  hints: string[];
}

export interface CallRefusedEvent {
  event: 'call_refused';
  server: string;
  tool: string;
  /** Why: the lock's sentence, or one of the rules' codes (unclassified, hint_mismatch, kind_denied,
   *  schema_refused, parameter_denied, parameter_fixed, arguments_invalid, ask_declined, ask_unavailable). */
  reason: string;
  /** The rules' explanation (names only). */
  detail?: string;
}

/** A prompts/get or resources/read of an item that changed or appeared since the lock (enforce). */
export interface ReadRefusedEvent {
  event: 'read_refused';
  server: string;
  kind: 'prompt' | 'resource';
  /** The prompt name or resource URI (at most 128 characters). */
  id: string;
  reason: string;
}

export interface CanaryEvent {
  event: 'canary';
  server: string;
  probe: string;
  result: 'pass' | 'fail';
  failed: string[];
  medianMs: number;
  thresholdMs: number;
  source: 'session' | 'check' | 'schedule';
  /** Set when the probe was not called: a failed canary whose times are 0 (docs/adr/0038). */
  notRun?: 'tool_not_approved' | 'rules_refused' | 'name_taken';
}

export interface BinaryChangedEvent {
  event: 'binary_changed';
  server: string;
  /** The refusal a launch would now meet (NOT_ALLOWLISTED, DIGEST_MISMATCH, COMMAND_NOT_FOUND…). */
  code: string;
  reason: string;
}

export interface VerifyFailedEvent {
  event: 'verify_failed';
  server: string;
  code: string;
  reason: string;
}

export interface ConfigInvalidEvent {
  event: 'config_invalid';
  code: string;
  reason: string;
}

export interface AlertFailedEvent {
  event: 'alert_failed';
  sink: string;
  reason: string;
}

export interface CatalogDriftEvent {
  event: 'catalog_drift';
  server: string;
  /** Which prompt, resource or template (by name / uri) was added, changed or removed; never its text. */
  changes: { kind: string; id: string; state: string }[];
}

/** A message from the server that was not forwarded: an answer no request waits for (an id of another form,
 *  unknown, repeated), a late answer to the warden's own request, or a batch. Never the message's content. */
export interface ServerMessageRefusedEvent {
  event: 'server_message_refused';
  server: string;
  /** impersonation: a question to the user worded as the warden's own (docs/adr/0022); unsubscribed: a
   *  revision 2026-07-28 acknowledgement or list change for no subscription the client opened (docs/adr/0044);
   *  oversize_input: an input_required result whose requestState or questions exceed the bounds (docs/adr/0047). */
  reason: 'unmatched_id' | 'late_answer' | 'batch' | 'impersonation' | 'unsubscribed' | 'not_in_era' | 'oversize_input' | 'malformed_result';
}

/** A client message that was not forwarded because the warden does not relay it (a batch). */
export interface ClientMessageRefusedEvent {
  event: 'client_message_refused';
  server: string;
  /** batch: a JSON-RPC batch; ambiguous_member: a member a reader ignoring case takes for one the warden read;
   *  no_handshake, during_handshake, second_initialize: a request before the handshake was released or after;
   *  unknown_method: a request the warden does not relay (proxy/client-methods.ts); other_era: a message of the
   *  other era than the connection's, or a 2026-07-28 one without a valid envelope (proxy/era.ts);
   *  ask_state_refused: a retry whose requestState or inputResponses the warden does not relay (spent, altered,
   *  for another call, mixed with a server's, or over the bounds: proxy/input-required.ts). */
  reason: 'batch' | 'ambiguous_member' | 'no_handshake' | 'during_handshake' | 'second_initialize' | 'unknown_method' | 'other_era' | 'ask_state_refused';
  /** How many requests in it were answered with the refusal. */
  requests: number;
  /** The method (at most 128 characters); for ambiguous_member, the member name it stands for (never the member
   *  as sent). */
  method?: string;
  member?: string;
}

export interface InadmissibleEvent {
  event: 'surface_inadmissible';
  server: string;
  reason: string;
}

/** A server- or client-driven report reached its per-session cap: further ones are refused or judged as before, not recorded
 *  or alerted one by one (refused pages are counted in the exit event). */
export interface ReportsCappedEvent {
  event: 'reports_capped';
  server: string;
  report: 'surface_inadmissible' | 'catalog_drift' | 'sandbox_denied' | 'completion_refused' | 'call_refused' | 'read_refused';
  cap: number;
}

/** The module guard ended a node server that tried to load code outside its attested set (a path or URL). */
export interface ModuleRefusedEvent {
  event: 'module_refused';
  server: string;
  pid: number;
  module: string;
}

/** A node server's module guard report was tampered with (src/launch/guard-report.ts): it went past its cap, was cut
 *  below what the warden had read, or could not be read; the server writes to it itself. What came before the cap,
 *  and what was read before a cut, was judged as ever. */
export interface GuardReportOverflowEvent {
  event: 'guard_report_overflow';
  server: string;
  pid: number;
  /** The largest size the warden saw the report at, in bytes (it cuts the file back to `cap` once a second). */
  bytes: number;
  cap: number;
  /** `grew` past the cap, `shrank` below what the warden had read of it, or `unreadable` at the session's end. */
  why: 'grew' | 'shrank' | 'unreadable';
}

/** `trust-root update` stored a new sigstore trust root in the home (trust-root.json). */
export interface TrustRootUpdatedEvent {
  event: 'trust_root_updated';
  /** Where it came from: "file <path> (sha256 <hex>)" or "TUF repository <url> (TUF root vN)". */
  source: string;
  /** The root's date (when its material was taken). */
  date: string;
  /** sha256 of trust-root.json as written. */
  sha256: string;
  /** The root it replaced (absent when the home's trust-root.json was not valid). */
  previousSource?: string;
  previousDate?: string;
}

/** A change of several trust files that was interrupted after it was decided (a crash, a full disk) was completed
 *  by a later command from the home's commit.journal (docs/adr/0027-trust-commit-journal.md). */
export interface TrustCommitCompletedEvent {
  event: 'trust_commit_completed';
  /** The change, as its command named it ("the trust bundle with serial 17"). */
  what: string;
  /** The trust files it replaced (names in the home). */
  files: string[];
}

export type AuditEvent = SurfaceFindingsEvent | TrustCommitCompletedEvent | BundleEvent | RulesEvent | SandboxEvent | TrustRootUpdatedEvent | PackageInstalledEvent | UnsignedAdmittedEvent | PackageUpgradedEvent | TrustOverrideEvent | LaunchEvent | ExitEvent | ModuleRefusedEvent | GuardReportOverflowEvent | OrphanKilledEvent | RunRecordRefusedEvent | EnrollEvent | SurfaceEvent | TierWideningEvent | CallRefusedEvent | ReadRefusedEvent | InadmissibleEvent | ReportsCappedEvent | ServerMessageRefusedEvent | ClientMessageRefusedEvent | CatalogDriftEvent | CanaryEvent | AlertFailedEvent | BinaryChangedEvent | ConfigInvalidEvent | VerifyFailedEvent;
