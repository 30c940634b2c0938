import type { SandboxStatus } from '../sandbox/view.js';
import { escaped, line, lockedTools, printTable } from './output.js';

// How `mcp-warden status` reads for a person: one table row per server and one per artifact for the whole
// home, or every detail of one server (`status <id>`). Scripts use --json, which holds everything.

/** A server installed into the sealed store (mcp-warden install). */
export interface PackageView {
  name: string;
  version: string;
  integrity: string;
  store: string;
  policy: string;
  pinned: { issuer: string; repository: string; workflow: string } | null;
  provenance?: { repository: string; workflow: string; ref?: string; commit?: string; issuer: string; signedAt?: string } | null;
  unsignedAdmittedBy?: string | null;
  verifiedAt?: string;
  dependencies?: { total: number; withProvenance: number };
  error?: string;
}

export interface ServerView {
  package?: PackageView;
  id: string;
  command: string;
  args: string[];
  posture: string;
  sandbox: SandboxStatus;
  allowed: boolean;
  resolvedPath?: string;
  error?: { code: string; message: string };
  /** `changes`: for a changed package tree, what was added, removed or changed since it was allowlisted. */
  artifacts?: { kind: string; path: string; sha256: string; chain: string[]; state: string; note: string; changes?: string }[];
  /** conditionalTools: how many of the locked tools only a client offering capabilities is listed. */
  lock: { tools: number; revision: string; surfaceHash: string; canaryBaselines: number; conditionalTools: number } | null;
  pinState: { state: unknown; source: unknown; at: unknown } | null;
  lastCanary: { result: string; at: unknown } | null;
  daemon?: { attestation: { state: string; since: string } | null; lastVerification: { at: string; surface: string; detail?: string } | null };
}

/** "2026-11-29 14:33Z" from an ISO timestamp. */
function when(at: unknown): string {
  return typeof at === 'string' ? `${at.slice(0, 10)} ${at.slice(11, 16)}Z` : '?';
}

const STATE: Record<string, string> = { allowed: 'allowlisted', not_allowlisted: 'NOT ALLOWLISTED', digest_mismatch: 'CHANGED', digest_at_other_path: 'ELSEWHERE' };

export function printOverview(servers: ServerView[]): void {
  line();
  printTable([
    ['SERVER', 'TRUST', 'SANDBOX', 'LOCK', 'SURFACE', 'CANARIES', 'RUNS'],
    ...servers.map((s) => [
      s.id,
      s.allowed ? 'allowed' : `REFUSED${s.error ? ` (${s.error.code})` : ''}`,
      sandboxCell(s.sandbox),
      s.lock ? `${s.lock.tools} tools${s.lock.conditionalTools > 0 ? ` (${s.lock.conditionalTools} conditional)` : ''}` : 'none',
      s.pinState ? `${String(s.pinState.state)} ${when(s.pinState.at)}` : 'not judged yet',
      s.lastCanary ? `${s.lastCanary.result} ${when(s.lastCanary.at)}` : 'not run yet',
      s.artifacts?.find((a) => a.kind === 'script')?.path ?? s.resolvedPath ?? s.command,
    ]),
  ]);
  line();
  printTable([['SERVER', 'KIND', 'SHA256', 'STATE', 'PATH'], ...servers.flatMap((s) => (s.artifacts ?? []).map((a) => [s.id, a.kind, a.sha256.slice(0, 16), STATE[a.state] ?? a.state, a.path]))]);
  const refused = servers.filter((s) => !s.allowed);
  if (refused.length > 0) line(escaped(`\nRefused: ${refused.map((s) => s.id).join(', ')}. Details: mcp-warden status <id>`));
}

/** A server's sandbox in a word or two: its network level, or why a launch would be refused. */
function sandboxCell(b: SandboxStatus): string {
  if (b.pin !== 'none' && b.pin !== 'pinned') return 'NOT PINNED';
  if (b.problem) return `REFUSED (${b.problem.code})`;
  return b.state === 'confined' ? `network ${b.network ?? '?'}` : b.state;
}

/** One line of a server's detail: commands, paths, package fields and messages come from files and registries,
 *  so each line goes through the one escaper. */
const shown = (text: string): void => line(escaped(text));

export function printDetail(s: ServerView): void {
  shown(`${s.id}  ${s.allowed ? 'allowed' : 'REFUSED'}  (posture ${s.posture})`);
  shown(`  command   ${[s.command, ...s.args].join(' ')}`);
  shown(`  sandbox   ${sandboxCell(s.sandbox)}${s.sandbox.problem ? `: ${s.sandbox.problem.message}` : ''}${s.sandbox.lastRefusal ? `; last launch refused ${s.sandbox.lastRefusal.code} at ${s.sandbox.lastRefusal.at}` : ''}`);
  const w = s.sandbox.writes;
  if (w) shown(w.observed ? '            denied writes observed in its last session' : w.byGuard ? `            denied writes NOT observed in the kernel in its last session (${w.why}); those of its node fs calls reported by its module guard (the server's own word)` : `            denied writes NOT observed in its last session: ${w.why}`);
  for (const d of s.sandbox.denied ?? []) shown(d.kind === 'write' ? `            write ${d.path}${d.truncated ? '…' : ''} (${d.call} ${d.errno}${d.source === 'guard' ? ', reported by its guard' : ''}) at ${d.at}` : d.kind === 'read' ? `            read ${d.path} (${d.reason}) at ${d.at}` : `            denied ${d.kind} ${d.host}:${d.port} (${d.reason}${d.address ? ` ${d.address}` : ''}) at ${d.at}`);
  shown(`  lock      ${s.lock ? `${lockedTools(s.lock.tools, s.lock.conditionalTools)}, revision ${s.lock.revision}, ${s.lock.canaryBaselines} canary baseline(s)` : `none (run: mcp-warden lock ${s.id})`}`);
  shown(`  surface   ${s.pinState ? `${String(s.pinState.state)} (${String(s.pinState.source)}, ${String(s.pinState.at)})` : 'not judged in a session yet'}`);
  shown(`  canaries  ${s.lastCanary ? `${s.lastCanary.result} (${String(s.lastCanary.at)})` : 'not run yet'}`);
  if (s.daemon) {
    const a = s.daemon.attestation;
    const v = s.daemon.lastVerification;
    shown(`  watched   ${a ? `${a.state === 'allowed' ? 'allowed' : `REFUSED (${a.state})`} since ${a.since}` : 'not yet checked by the daemon'}`);
    shown(`  verified  ${v ? `${v.surface}${v.detail ? ` (${v.detail})` : ''} at ${v.at}` : 'no scheduled verification yet'}`);
  }
  if (s.package) printPackage(s.package);
  if (s.error) shown(`  refused   ${s.error.code}: ${s.error.message}`);
  if (s.artifacts) {
    shown(`  runs      ${s.resolvedPath}`);
    for (const a of s.artifacts) {
      shown(`  ${a.kind.padEnd(11)}${a.path}`);
      shown(`             sha256 ${a.sha256}  ${a.note}`);
      if (a.chain.length > 1) shown(`             via ${a.chain.join(' -> ')}`);
      if (a.changes) shown(`             ${a.changes}`);
    }
  }
}

function printPackage(p: PackageView): void {
  shown(`  package   ${p.name}@${p.version}  ${p.integrity}`);
  shown(`  store     ${p.store}`);
  if (p.error) {
    shown(`  provenance UNKNOWN: ${p.error}`);
    return;
  }
  const v = p.provenance;
  if (v) shown(`  provenance verified ${p.verifiedAt ?? '?'}: ${v.repository} ${v.workflow}${v.ref ? ` ${v.ref}` : ''}${v.commit ? ` @ ${v.commit.slice(0, 12)}` : ''}`);
  else shown(`  provenance none (admitted unsigned by ${p.unsignedAdmittedBy ?? '?'}, ${p.verifiedAt ?? '?'})`);
  shown(`  policy    ${p.policy}${p.pinned ? `, pinned to ${p.pinned.repository} ${p.pinned.workflow}` : ''}`);
  if (p.dependencies) shown(`  deps      ${p.dependencies.withProvenance} of ${p.dependencies.total} packages with verified provenance`);
}
