import { printable } from '../escape.js';
import { JsonNumber, type JsonObject } from '../protocol/json/reader.js';
import { errorResponse } from '../protocol/message.js';
import type { WardenErrorCode } from '../error.js';
import type { OwnWords } from '../own-words.js';
import type { ServerRefusal } from '../surface/posture.js';
import { MAX_COMPLETION_CHARS, MAX_COMPLETION_VALUES } from './completion.js';

// What the warden says to the client in its own name when it refuses a server's answer or closes a session: a
// fixed sentence chosen by a stable code, the server's id (the operator's name for it) and the command to run
// next. Never a string the server chose (member, tool or catalog names, paths, its error messages), cut, quoted
// or escaped or not: the client, and the model behind it, reads the error of its initialize as the warden's word
// (issue 26, sixth review; docs/adr/0052). What exactly happened goes to the warden's stderr report and the
// audit log, through the one escaper (src/escape.ts).

export const WARDEN_REFUSED = -32001;
const INTERNAL_ERROR = -32603;

/** How a session ends when the warden closes it (the exit event's cause). */
export type ClosingCause = 'protocol_error' | 'verification_failed' | 'surface_refused' | 'inadmissible';

/** What the client is told, by code. `canary_failed` carries the failures as the operator's probes and the
 *  warden's failure classes name them (session-canaries.ts): no text of the server's is in them. */
export type Said =
  | { code: ServerRefusal['code']; fields?: readonly string[] }
  | { code: 'canary_failed'; failures: string }
  | { code: 'inadmissible' | 'protocol_error'; words?: OwnWords }
  | { code: 'verification_failed'; wardenCode?: WardenErrorCode }
  | { code: 'server_exited'; exitCode?: number | null }
  | { code: 'surface_refused' | 'module_guard' };

/** The members of an initialize result the revisions define: the only member names the warden writes to a
 *  client (as its own words, from this list), the others counted. */
const REVISION_MEMBERS = ['protocolVersion', 'capabilities', 'serverInfo', 'instructions', '_meta'];

function members(fields: readonly string[]): string {
  const named = REVISION_MEMBERS.filter((m) => fields.includes(m));
  const others = fields.length - named.length;
  const parts = [...named, ...(others > 0 ? [`${others} other${others === 1 ? '' : 's'} (named on the warden's stderr)`] : [])];
  return parts.length === 0 ? '' : ` (member${fields.length === 1 ? '' : 's'} ${parts.join(', ')})`;
}

/** What happened, in the warden's words, after "server 'ID' ". */
export function whatHappened(serverId: string, said: Said): string {
  switch (said.code) {
    case 'instructions_changed':
      return 'was refused: its instructions changed since they were locked';
    case 'handshake_unlocked':
      return "was refused: warden.lock holds no print of its initialize result (its serverInfo, capabilities and other members: an entry taken before mcp-warden locked them), so nothing proves what the client would be shown; review what it serves, then accept it with 'mcp-warden pin'";
    case 'handshake_changed':
      return `was refused: its initialize result changed since it was locked${members(said.fields ?? [])}`;
    case 'not_locked':
      return `was refused: it has no entry in tools.lock; review its tools and run 'mcp-warden lock ${serverId}'`;
    case 'canary_failed':
      return `was refused: ${said.failures}`;
    case 'surface_refused':
      return 'was refused: what it serves is not what warden.lock holds';
    case 'inadmissible':
      if (said.words) return `served what cannot be admitted: ${said.words} (the warden's stderr has the detail)`;
      return "served what cannot be admitted: a message, listing or page that cannot be read one way only, is malformed, or exceeds a cap (the warden's stderr says which)";
    case 'protocol_error':
      if (said.words) return `broke the protocol: ${said.words}`;
      return "broke the protocol: an answer the warden could not use (an error, a line over the cap, too many messages no request waits for, or none in time); the warden's stderr says which";
    case 'verification_failed':
      if (said.wardenCode === 'STREAM_HELD_ELSEWHERE') return `was stopped (STREAM_HELD_ELSEWHERE): a process the warden did not attest holds the stdout of server '${serverId}', or it runs another command line than the one digested; the warden's stderr names it`;
      if (said.wardenCode) return `could not be verified as the program that was attested (${said.wardenCode}); the warden's stderr says why`;
      return "could not be verified as the program that was attested; the warden's stderr says why";
    case 'server_exited':
      return typeof said.exitCode === 'number' ? `exited with code ${said.exitCode} before answering` : 'exited before answering';
    case 'module_guard':
      return "was ended by the warden's module guard: it tried to load a file outside its attested set, or one that changed after it was digested (the warden's stderr names it)";
  }
}

const REFUSED = 'was refused: ';
const next = (serverId: string): string => `Run 'mcp-warden status ${serverId}' or 'mcp-warden diff ${serverId}' for details.`;

/** What to check when a server ended before answering: its own words are in the client's log (`run` relays its
 *  stderr there, each line behind a prefix naming it), never in this message. */
const exitedNext = (serverId: string): string => `Its last stderr lines are in this client's log of the server, each behind '[server ${serverId}]' (the warden's report after them quotes the last). Check what they say: a file or folder it cannot find or write, or an address it cannot reach, when it runs in a sandbox ('mcp-warden sandbox ${serverId}' shows what it may write and reach); its command, arguments and environment ('mcp-warden status ${serverId}').`;

/** The error a waiting request of the client's gets when the warden closes the session. */
export function sessionClosed(clientId: string, serverId: string, cause: ClosingCause, said: Said): Buffer {
  return errorResponse(clientId, WARDEN_REFUSED, `mcp-warden closed the session: server '${serverId}' ${whatHappened(serverId, said)}. ${said.code === 'server_exited' ? exitedNext(serverId) : next(serverId)}`, { cause, server: serverId });
}

/** The error a client request gets in place of a server's answer the warden refused (a listing page, a
 *  server/discover result); `what` is the warden's own name for it ("this tools/list page"). */
export function answerRefused(clientId: string, serverId: string, what: string, cause: ClosingCause, said: Said): Buffer {
  const happened = whatHappened(serverId, said);
  const said0 = happened.startsWith(REFUSED) ? happened.slice(REFUSED.length) : `it ${happened}`;
  // A 2026-07-28 server/discover result is judged as an initialize result (surface/discover.ts): say which it was.
  const why = what === 'the server/discover answer' ? said0.replace('its initialize result', 'its server/discover result (read as an initialize result)') : said0;
  return errorResponse(clientId, WARDEN_REFUSED, `mcp-warden refused ${what} of server '${serverId}': ${why}. ${next(serverId)}`, { cause, server: serverId });
}

/** The error a request gets in place of an answer the warden cannot read as its revision defines it
 *  (response-shape.ts malformedAnswer): its result, or its result's `_meta`, is not a JSON object. The session goes
 *  on: the answer names no drift of the surface, it is refused as unreadable (issue 26, eleventh review). */
export function malformedRefused(clientId: string, serverId: string, what: 'result' | '_meta' | 'completion'): Buffer {
  const member =
    what === 'completion' ? `its completion is not what its revision defines (an object whose "values" are at most ${MAX_COMPLETION_VALUES} strings, each of at most ${MAX_COMPLETION_CHARS} characters)`
    : `${what === 'result' ? 'its result' : "its result's _meta"} is not a JSON object, the form its revision defines`;
  return errorResponse(clientId, WARDEN_REFUSED, `mcp-warden refused this answer of server '${serverId}': ${member}. ${next(serverId)}`, { cause: 'inadmissible', server: serverId });
}

/** A server's error answer before the session was released, when nothing of it was judged: the client gets its
 *  code (a JSON-RPC integer, else −32603) and the warden's sentence; its message, escaped and cut, goes to stderr. */
export function unjudgedError(cfg: { serverId: string; report: (message: string) => void }, clientId: string, method: string, value: JsonObject): Buffer {
  const error = value.get('error');
  const code = error instanceof Map ? error.get('code') : undefined;
  const message = error instanceof Map ? error.get('message') : undefined;
  const lexeme = code instanceof JsonNumber ? code.lexeme : undefined;
  const said = typeof message === 'string' ? `"${printable(message, 200)}"` : 'no message';
  cfg.report(`server '${cfg.serverId}' answered ${printable(method, 64)} with an error before its handshake was judged (code ${lexeme === undefined ? 'none' : printable(lexeme, 24)}): ${said}; the client was told the code only`);
  const n = lexeme !== undefined && /^-?\d{1,9}$/.test(lexeme) ? Number(lexeme) : INTERNAL_ERROR;
  return errorResponse(clientId, n, `mcp-warden: server '${cfg.serverId}' answered this request with an error (code ${n}) before its handshake was judged; its message is not relayed (the warden's stderr shows it). ${next(cfg.serverId)}`, { server: cfg.serverId });
}

/** Why a launch was refused, by its code, in the warden's words (what was found is on the warden's stderr). */
function launchReason(code: WardenErrorCode): string {
  switch (code) {
    case 'NOT_ALLOWLISTED':
    case 'ALLOWLIST_STALE':
      return 'a file it would run is not in the allowlist';
    case 'DIGEST_MISMATCH':
    case 'DIGEST_AT_OTHER_PATH':
    case 'ARTIFACT_CHANGED':
    case 'EXEC_MISMATCH':
    case 'STORE_ENTRY_CHANGED':
    case 'LIBRARY_UNATTESTED':
      return 'a file it would run is not the one that was attested';
    case 'ELF_INVALID':
    case 'LIBRARY_NOT_FOUND':
    case 'LIBRARY_PATH_UNSUPPORTED':
      return 'the shared libraries its executable loads cannot be found or attested';
    case 'REGISTRY_LAUNCHER':
      return 'its command is a registry launcher, which fetches code at each launch. Install a pinned copy and add that instead';
    case 'FILE_INSECURE':
    case 'HOME_INSECURE':
      return "the warden's home or one of its files is open to other users";
    case 'FILE_UNREADABLE':
    case 'FILE_NOT_JSON':
    case 'FILE_INVALID':
      return "one of the warden's own files (servers.json, the allowlist, the locks) cannot be read or is not valid";
    case 'SERVER_UNKNOWN':
      return 'servers.json has no server of that id';
    case 'LOCK_MISSING':
    case 'LOCK_INVALID':
      return 'its lock is missing or cannot be read';
    case 'RULES_NOT_PINNED':
      return 'its rules are not the ones pinned in warden.lock';
    case 'SANDBOX_NOT_PINNED':
      return 'its sandbox is not the one pinned in warden.lock';
    case 'SANDBOX_ENGINE_MISSING':
    case 'SANDBOX_UNAVAILABLE':
    case 'SANDBOX_INVALID':
      return 'its sandbox cannot be applied on this host as declared';
    default:
      return 'a check made before its launch failed';
  }
}

/** The message a refused launch answers the client's first request with: the server's id when it is one the
 *  warden could have written (else none), the refusal's code, and a sentence chosen by it. Never the refusal's own
 *  message: it can name files inside a package tree, a shebang line or other text a package chose. */
export function launchRefused(serverId: string | undefined, code: WardenErrorCode): string {
  const who = serverId === undefined ? 'the server its command line names' : `server '${serverId}'`;
  const more = serverId === undefined ? "Run 'mcp-warden status' for details." : `Run 'mcp-warden status ${serverId}' for details.`;
  return `mcp-warden refused to launch ${who} (${code}): ${launchReason(code)}. The warden's stderr says what it found. ${more}`;
}

/** The error a 2026-07-28 request gets in place of an answer whose `_meta` names the server otherwise than the
 *  lock does (modern-judge.ts judgeServerInfo): the serverInfo every result of that revision carries. */
export function serverInfoRefused(clientId: string, serverId: string, said: Said): Buffer {
  const why = said.code === 'handshake_unlocked' ? 'warden.lock holds no print of its server/discover result, so nothing proves the serverInfo its answers carry' : 'the serverInfo its answers carry in their _meta changed since it was locked';
  return errorResponse(clientId, WARDEN_REFUSED, `mcp-warden refused this answer of server '${serverId}': ${why}. ${next(serverId)}`, { cause: 'surface_refused', server: serverId });
}
