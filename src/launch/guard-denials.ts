// The warden's side of the denied writes a node server's module guard reports (preload/fs-denials.ts; docs/adr/
// 0068-denied-writes-reported-by-the-guard.md): the guard appends one JSON line per denied write to its report
// file, which the warden reads as it bounds the report (./guard-report.ts: once a second, before each chunk of
// the server's stdout, and once the session ended). What is read is
// the server's word: every field is checked and bounded here, the path is only ever recorded and printed escaped.

/** A denied write as the server's own node reported it (never the kernel's view: `source` says so). */
export interface GuardDenial {
  kind: 'write';
  path: string;
  call: string;
  errno: 'EROFS' | 'EACCES' | 'EPERM';
  truncated?: true;
  source: 'guard';
}

/** A read of one of the listed secret paths (the warden's list, never the server's text), as the server's own
 *  node reported it: where no decoy is placed (a warden that is not root), the hidden home answered "no such file". */
export interface GuardRead {
  kind: 'read';
  path: string;
  reason: 'guard';
}

/** The longest line that can be a report (the guard cuts paths at 1024 characters, each at most 6 JSON bytes). */
const MAX_LINE = 8 * 1024;
const ERRNOS = new Set(['EROFS', 'EACCES', 'EPERM']);

/** One line of the report file as a denied write, or undefined (another record of the guard's, or garbage). */
export function parseGuardDenial(line: string, secrets: readonly string[] = []): GuardDenial | GuardRead | undefined {
  if (line.length > MAX_LINE) return undefined;
  if (line.startsWith('{"read":')) return parseGuardRead(line, secrets);
  if (!line.startsWith('{"denied":')) return undefined;
  let r: { denied?: { call?: unknown; errno?: unknown; path?: unknown; truncated?: unknown } };
  try {
    r = JSON.parse(line) as typeof r;
  } catch {
    return undefined;
  }
  const d = r.denied;
  if (typeof d !== 'object' || d === null) return undefined;
  if (typeof d.call !== 'string' || !/^[a-z0-9_]{1,32}$/.test(d.call)) return undefined;
  if (typeof d.errno !== 'string' || !ERRNOS.has(d.errno)) return undefined;
  if (typeof d.path !== 'string' || d.path.length === 0 || d.path.length > 1024) return undefined;
  return { kind: 'write', path: d.path, call: d.call, errno: d.errno as GuardDenial['errno'], ...(d.truncated === true ? { truncated: true as const } : {}), source: 'guard' };
}

/** A read report names one of `secrets`, the paths the warden gave the guard: anything else is no report. */
function parseGuardRead(line: string, secrets: readonly string[]): GuardRead | undefined {
  let r: { read?: { path?: unknown } };
  try {
    r = JSON.parse(line) as typeof r;
  } catch {
    return undefined;
  }
  const p = typeof r.read === 'object' && r.read !== null ? r.read.path : undefined;
  return typeof p === 'string' && secrets.includes(p) ? { kind: 'read', path: p, reason: 'guard' } : undefined;
}

/** The reader of the guard's report lines (./guard-report.ts boundReport: the report file has one reader) that
 *  gives `denied` each denied write (and read of `secrets`) the server's guard reported, at most `max` of them. */
export function guardDenialLines(denied: (d: GuardDenial | GuardRead) => void, max: number, secrets: readonly string[] = []): (line: string) => void {
  let given = 0;
  return (line) => {
    if (given >= max) return;
    const d = parseGuardDenial(line, secrets);
    if (!d) return;
    given++;
    denied(d);
  };
}
