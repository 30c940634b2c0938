import fs from 'node:fs';
import { WardenError } from '../error.js';
import { sameInode, statKey, type StatKey } from '../attest/stat-key.js';
import { PF_FORKNOEXEC, readProcStat } from './proc.js';
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

/**
 * The server's end of its stdout: what the started process has as fd 1 right after exec, and the peer of the
 * warden's own end. The first alone can be fooled: a program that swaps its fd 1 for a socket of its own
 * before the warden looks (dup, socketpair, dup2) and hands the real one to a child would have the warden
 * watch the wrong socket. Node cannot ask the kernel for a unix socket's peer, but libuv makes the pair with
 * one socketpair(2), whose two sockets get consecutive inode numbers, the child's after the parent's (both
 * checked on Linux 6.x): the peer is the warden's end + 1. It is added as a candidate, never relied on alone
 * (an inode taken from another batch would name a socket nobody in the session holds).
 */
export function readStreamEnds(pid: number, wardenEndFd?: number): StreamEnds {
  let link: string;
  try {
    link = fs.readlinkSync(`/proc/${pid}/fd/1`);
  } catch (err) {
    throw new WardenError('EXEC_MISMATCH', `cannot read /proc/${pid}/fd/1 to learn which processes hold the server's stdout: ${(err as Error).message}`);
  }
  if (!/^(?:socket|pipe):\[\d+\]$/.test(link)) {
    throw new WardenError('EXEC_MISMATCH', `the server's stdout is ${link.slice(0, 80)}, not the stream the warden gave it: the program replaced its stdout before the warden could check it.`);
  }
  const links = new Set([link]);
  if (wardenEndFd !== undefined) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/self/fd/${wardenEndFd}`));
      if (m) links.add(`socket:[${BigInt(m[1] as string) + 1n}]`);
    } catch {
      // the warden's end is gone: the session is ending anyway
    }
  }
  return { links };
}

export interface ForeignHolder {
  pid: number;
  /** What the process executes (/proc/PID/exe), or why that could not be read. */
  exe: string;
  /** child: another program (or the same interpreter exec'd again) holds the stdout; reexec: the server itself
   *  now runs another command line than it was started with. */
  why: 'child' | 'reexec';
}

/** What a holder of the server's stdout must be to pass. */
export interface Attested {
  /** The digested executable (for a script, its interpreter). */
  expected: StatKey;
  /** The process the warden started. */
  leader: number;
  /** For a script on an interpreter other than node: the command line the leader was started with. The same
   *  interpreter exec'd on another script keeps the executable's inode; its command line tells it apart. */
  leaderCmdline?: Buffer;
  /** A confined server's sandbox engine: its processes (bwrap and the init of its pid namespace, which hold
   *  the server's stdio by design) pass while they run the engine's inode (docs/adr/0050-sandbox-engine.md). */
  engine?: { pids: number[]; key: StatKey };
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

function cmdlineOf(pid: number): Buffer | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`);
  } catch {
    return undefined;
  }
}

function runsDigested(pid: number, expected: StatKey): boolean {
  try {
    return sameInode(statKey(fs.statSync(`/proc/${pid}/exe`, { bigint: true })), expected);
  } catch {
    return false; // gone, or not ours to read
  }
}

/**
 * True when `pid` is the digested program by descent: every process from it up to the leader (exclusive)
 * executes the digested inode and is a fork that has not exec'd since (PF_FORKNOEXEC). A process whose parent
 * chain does not reach the leader (its parent exited, or it was reparented) cannot be vouched for. Nor can a
 * process that exec'd, whatever its command line says: a node child carrying the module guard's `--import`
 * may carry it as its script's argument, or run the guard on an attested set its parent forged on its fd 3,
 * and nothing the warden can read from outside tells those apart from the warden's own set (docs/adr/
 * 0042-no-exec-child-holds-stdout.md).
 */
function forkOfLeader(pid: number, a: Attested): boolean {
  for (let cur = pid, hops = 0; hops < 64; hops++) {
    if (cur === a.leader) return true;
    const st = readProcStat(cur);
    if (!st || !runsDigested(cur, a.expected) || (st.flags & PF_FORKNOEXEC) === 0) return false;
    cur = st.ppid;
  }
  return false;
}

function exeLink(pid: number): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/exe`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // exited meanwhile
    return `(unreadable: ${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}

/**
 * The session's processes that hold the server's stdout end (or whose descriptors cannot be read, which fails
 * closed) and are not the digested program or a fork of it; and the leader itself if it now runs another
 * command line than it was started with.
 */
export function foreignHolders(members: Iterable<number>, ends: StreamEnds, a: Attested): ForeignHolder[] {
  const out: ForeignHolder[] = [];
  for (const pid of members) {
    if (pid === a.leader) {
      const now = a.leaderCmdline ? cmdlineOf(pid) : undefined;
      if (a.leaderCmdline && now && !now.equals(a.leaderCmdline)) out.push({ pid, exe: exeLink(pid) ?? '(gone)', why: 'reexec' });
      continue;
    }
    if (forkOfLeader(pid, a)) continue;
    if (a.engine?.pids.includes(pid) && runsDigested(pid, a.engine.key)) continue;
    if (holds(pid, ends) === false) continue;
    const exe = exeLink(pid);
    if (exe !== undefined) out.push({ pid, exe, why: 'child' });
  }
  return out;
}

/** The sentence of a STREAM_HELD_ELSEWHERE refusal. */
export function foreignHolderMessage(serverId: string, file: string, holder: ForeignHolder): string {
  if (holder.why === 'reexec') {
    return (
      `server '${serverId}' (process ${holder.pid}, ${holder.exe}) now runs another command line than the one the warden started and digested: ` +
      `a script that runs its interpreter again on another script is not the digested script, so the warden stopped the session. ` +
      `Enroll the script that actually serves instead: mcp-warden add ${serverId} -- ${holder.exe} <that script>`
    );
  }
  return (
    `process ${holder.pid} (${holder.exe}) holds the stdout of server '${serverId}' but is neither the digested ${file} nor a fork of it: ` +
    `the warden attests only the program it starts, so it stopped the session. The server starts another program (or its own interpreter on another script) as a child with its stdout: ` +
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
    private readonly attested: Attested,
    private readonly ends: StreamEnds,
    private readonly scanner: SessionScanner,
  ) {}

  beforeLine(): void {
    const t = Date.now();
    if (this.last !== undefined && t - this.last < HOLDER_RECHECK_MS) return;
    this.last = t;
    const found = foreignHolders(this.scanner.scan().keys(), this.ends, this.attested);
    if (found.length > 0) throw new WardenError('STREAM_HELD_ELSEWHERE', foreignHolderMessage(this.serverId, this.file, found[0] as ForeignHolder));
  }
}
