// The one error type a user can meet. `code` is stable (scripts and tests match it); `message` says what
// happened, naming the file, server or tool, and what to do next. `exitCode` follows the CLI contract:
// 1 drift or failed check · 2 usage or invalid config · 3 refused or unreachable · 4 lockfile · 5 inadmissible.

export type WardenErrorCode =
  | 'USAGE'
  | 'HOME_INSECURE'
  | 'FILE_INSECURE'
  | 'FILE_UNREADABLE'
  | 'FILE_NOT_JSON'
  | 'FILE_INVALID'
  | 'SERVER_UNKNOWN'
  | 'SERVER_EXISTS'
  | 'LOADER_VARIABLE'
  | 'COMMAND_NOT_FOUND'
  | 'COMMAND_NOT_EXECUTABLE'
  | 'REGISTRY_LAUNCHER'
  | 'SHEBANG_INVALID'
  | 'INTERPRETER_NOT_FOUND'
  | 'PACKAGE_TREE_INVALID'
  | 'NOT_ALLOWLISTED'
  | 'DIGEST_MISMATCH'
  | 'DIGEST_AT_OTHER_PATH'
  | 'EXEC_MISMATCH'
  | 'ARTIFACT_CHANGED'
  | 'LAUNCH_FAILED'
  | 'WARDEN_PRELOADED'
  | 'NODE_OPTION_REFUSED'
  | 'INTERPRETER_OPTION_REFUSED'
  | 'PRELOAD_INVALID'
  | 'AUDIT_LOCKED'
  | 'AUDIT_CHAIN_BROKEN'
  | 'ALLOWLIST_STALE'
  | 'LOCK_MISSING'
  | 'LOCK_INVALID'
  | 'LOCK_EXISTS'
  | 'SURFACE_INADMISSIBLE'
  | 'SURFACE_REFUSED'
  | 'SURFACE_DRIFT'
  | 'PROTOCOL_FAILURE'
  | 'NOTIFY_UNSUPPORTED'
  | 'NOTIFY_UNAVAILABLE'
  | 'CLIENT_CONFIG_INVALID'
  | 'CLIENT_CONFIG_CHANGED'
  | 'INSTALL_FAILED'
  | 'CANARY_STALE'
  | 'FILE_LOCKED'
  | 'EXEC_HANDED_OFF'
  | 'STREAM_HELD_ELSEWHERE'
  | 'WRAPPER_COMMAND'
  | 'PROVENANCE_INVALID'
  | 'PROVENANCE_SUBJECT_MISMATCH'
  | 'PROVENANCE_MISSING'
  | 'PUBLISHER_CHANGED'
  | 'IDENTITY_MISMATCH'
  | 'INTEGRITY_MISMATCH'
  | 'TRUST_ROOT_STALE'
  | 'TRUST_ROOT_INVALID'
  | 'TRUST_ROOT_UPDATE_FAILED'
  | 'REGISTRY_FAILED'
  | 'STORE_ENTRY_CHANGED'
  | 'NOT_INSTALLED';

const EXIT_BY_CODE: Record<WardenErrorCode, number> = {
  USAGE: 2,
  HOME_INSECURE: 2,
  FILE_INSECURE: 2,
  FILE_UNREADABLE: 2,
  FILE_NOT_JSON: 2,
  FILE_INVALID: 2,
  SERVER_UNKNOWN: 2,
  SERVER_EXISTS: 2,
  LOADER_VARIABLE: 2,
  COMMAND_NOT_FOUND: 3,
  COMMAND_NOT_EXECUTABLE: 3,
  REGISTRY_LAUNCHER: 3,
  SHEBANG_INVALID: 3,
  INTERPRETER_NOT_FOUND: 3,
  PACKAGE_TREE_INVALID: 3,
  NOT_ALLOWLISTED: 3,
  DIGEST_MISMATCH: 3,
  DIGEST_AT_OTHER_PATH: 3,
  EXEC_MISMATCH: 3,
  ARTIFACT_CHANGED: 3,
  LAUNCH_FAILED: 3,
  WARDEN_PRELOADED: 3,
  NODE_OPTION_REFUSED: 3,
  INTERPRETER_OPTION_REFUSED: 3,
  PRELOAD_INVALID: 3,
  AUDIT_LOCKED: 3,
  AUDIT_CHAIN_BROKEN: 1,
  ALLOWLIST_STALE: 1,
  LOCK_MISSING: 4,
  LOCK_INVALID: 4,
  LOCK_EXISTS: 2,
  SURFACE_INADMISSIBLE: 5,
  SURFACE_REFUSED: 3,
  SURFACE_DRIFT: 1,
  PROTOCOL_FAILURE: 3,
  NOTIFY_UNSUPPORTED: 2,
  NOTIFY_UNAVAILABLE: 2,
  CLIENT_CONFIG_INVALID: 2,
  CLIENT_CONFIG_CHANGED: 2,
  INSTALL_FAILED: 3,
  CANARY_STALE: 1,
  FILE_LOCKED: 3,
  EXEC_HANDED_OFF: 3,
  STREAM_HELD_ELSEWHERE: 3,
  WRAPPER_COMMAND: 3,
  PROVENANCE_INVALID: 3,
  PROVENANCE_SUBJECT_MISMATCH: 3,
  PROVENANCE_MISSING: 3,
  PUBLISHER_CHANGED: 3,
  IDENTITY_MISMATCH: 3,
  INTEGRITY_MISMATCH: 3,
  TRUST_ROOT_STALE: 3,
  TRUST_ROOT_INVALID: 2,
  TRUST_ROOT_UPDATE_FAILED: 3,
  REGISTRY_FAILED: 3,
  STORE_ENTRY_CHANGED: 3,
  NOT_INSTALLED: 2,
};

export class WardenError extends Error {
  readonly code: WardenErrorCode;
  readonly exitCode: number;

  constructor(code: WardenErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WardenError';
    this.code = code;
    this.exitCode = EXIT_BY_CODE[code];
  }
}

/** The errno code of a Node system error, or undefined. */
export function errnoOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
}
