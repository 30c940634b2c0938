import fs from 'node:fs';
import { WardenError } from '../error.js';
import { sameInode, statKey, type StatKey } from '../attest/stat-key.js';
import type { SessionScanner } from './session-scan.js';

// The warden attests the program it starts. A program that starts the server as a child of its own and stays
// (`timeout 1d node server.mjs`, flock, a shell script that runs node without exec, a launcher that spawns
// with stdio inherited) hands the server's stdout to a process nobody digested, while /proc/PID/exe of the
// process the warden started still names the digested file. So, besides the executable, the warden checks who
// holds the server's end of its stdout: every process of the session that holds it must be executing the
// digested file (the process itself, or a fork of it). The end is what the started process has as fd 1 (a
// socket libuv made; the warden holds the other end, an inode of its own).
//
// Only stdout: that is what reaches the client. Children that inherit stdin alone are common and harmless
// here (python's subprocess.run inherits stdin unless told otherwise; a shell's $(…) does too).

export interface StreamEnds {
  /** Link text of the server's fd 1 at launch, e.g. "socket:[617933]". */
  links: Set<string>;
}

/** The server's end of its stdout, read from /proc right after exec. */
export function readStreamEnds(pid: number): StreamEnds {
  let link: string;
  try {
    link = fs.readlinkSync(`/proc/${pid}/fd/1`);
  } catch (err) {
    throw new WardenError('EXEC_MISMATCH', `cannot read /proc/${pid}/fd/1 to learn which processes hold the server's stdout: ${(err as Error).message}`);
  }
  if (!/^(?:socket|pipe):\[\d+\]$/.test(link)) {
    throw new WardenError('EXEC_MISMATCH', `the server's stdout is ${link.slice(0, 80)}, not the stream the warden gave it: the program replaced its stdout before the warden could check it.`);
  }
  return { links: new Set([link]) };
}

export interface ForeignHolder {
  pid: number;
  /** What the process executes (/proc/PID/exe), or why that could not be read. */
  exe: string;
}

function holds(pid: number, ends: StreamEnds): boolean | undefined {
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? false : undefined;
  }
  for (const fd of fds) {
    try {
      if (ends.links.has(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

/**
 * The session's processes that hold the server's stdout end (or whose descriptors cannot be read, which
 * fails closed) and do not execute the digested file.
 */
export function foreignHolders(members: Iterable<number>, ends: StreamEnds, expected: StatKey): ForeignHolder[] {
  const out: ForeignHolder[] = [];
  for (const pid of members) {
    let exe: StatKey | undefined;
    try {
      exe = statKey(fs.statSync(`/proc/${pid}/exe`, { bigint: true }));
    } catch {
      exe = undefined; // gone, or not ours to read: judged by its descriptors below
    }
    if (exe && sameInode(exe, expected)) continue;
    const held = holds(pid, ends);
    if (held === false) continue;
    let link: string;
    try {
      link = fs.readlinkSync(`/proc/${pid}/exe`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // exited between the two reads
      link = `(unreadable: ${(err as NodeJS.ErrnoException).code ?? 'error'})`;
    }
    out.push({ pid, exe: link });
  }
  return out;
}

/** The sentence of a STREAM_HELD_ELSEWHERE refusal. */
export function foreignHolderMessage(serverId: string, file: string, holder: ForeignHolder): string {
  return (
    `process ${holder.pid} (${holder.exe}), started by the digested ${file}, holds the stdout of server '${serverId}' but is not ${file}: ` +
    `the warden attests only the program it starts, so it stopped the session. ${file} starts the server as a child of its own (a wrapper such as timeout, or a launcher): ` +
    `enroll the command that child runs instead: mcp-warden add ${serverId} -- ${holder.exe.startsWith('(') ? '<program>' : holder.exe} <its arguments>`
  );
}

/** How often (ms) the holders are looked for again once the server's first line was checked. */
export const HOLDER_RECHECK_MS = 1_000;

/**
 * Checks who holds the server's stdout before its first line (what would be relayed first), then at most every
 * HOLDER_RECHECK_MS (a scan of /proc costs about a millisecond per hundred processes). Not at launch: a start-up
 * script's short-lived helpers (`sleep`, `mkdir`) may hold it then, before the script execs the server, and
 * that hand-off is refused by the executable check. Throws STREAM_HELD_ELSEWHERE.
 */
export class HolderCheck {
  private last: number | undefined;

  constructor(
    private readonly serverId: string,
    private readonly file: string,
    private readonly expected: StatKey,
    private readonly ends: StreamEnds,
    private readonly scanner: SessionScanner,
  ) {}

  beforeLine(): void {
    const t = Date.now();
    if (this.last !== undefined && t - this.last < HOLDER_RECHECK_MS) return;
    this.last = t;
    const found = foreignHolders(this.scanner.scan().keys(), this.ends, this.expected);
    if (found.length > 0) throw new WardenError('STREAM_HELD_ELSEWHERE', foreignHolderMessage(this.serverId, this.file, found[0] as ForeignHolder));
  }
}
