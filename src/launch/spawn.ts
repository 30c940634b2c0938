import { spawn, type ChildProcessByStdio } from 'node:child_process';
import fs from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { WardenError } from '../error.js';
import { sameInode, sameKey, statKey, type StatKey } from '../attest/stat-key.js';
import { joinCgroup, spawnInCgroup, type Cgroup } from './cgroup.js';
import { classifyMismatch, handOffMessage, type ExecContext } from './exec-handoff.js';

export type ServerProcess = ChildProcessByStdio<Writable, Readable, Readable>;

export interface SpawnSpec {
  file: string;
  args: string[];
  argv0: string;
  cwd: string | undefined;
  env: Record<string, string>;
  /** The session's cgroup, if it has one: the server is born in it, or joins it at once when `held`. */
  cgroup?: Cgroup | undefined;
  /** The server runs no code of its own until the warden releases it (a node server behind the module guard's
   *  gate): it joins the cgroup after spawn, off this thread, and the caller awaits `contained` before release. */
  held?: boolean;
  /** The child's fds 3, 4, ...: a socket to it ('pipe') or a descriptor of this process (the module guard's). */
  extraStdio?: Array<'pipe' | number>;
}

/**
 * Starts the server in its own process group (and cgroup, when given) with piped stdio. Resolves once exec
 * has happened; `contained` says whether the server is in the cgroup (for a held server, once it has joined).
 */
export function spawnServer(spec: SpawnSpec): Promise<{ child: ServerProcess; contained: Promise<boolean> }> {
  return new Promise((resolve, reject) => {
    const { result: child, contained } = spawnInCgroup(spec.held ? undefined : spec.cgroup, () =>
      spawn(spec.file, spec.args, {
        argv0: spec.argv0,
        cwd: spec.cwd,
        env: spec.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe', ...(spec.extraStdio ?? [])],
      }) as unknown as ServerProcess,
    );
    // A server that closes its stdin early must not crash the warden with EPIPE.
    child.stdin.on('error', () => {});
    child.once('error', (err) =>
      reject(new WardenError('LAUNCH_FAILED', `could not start ${spec.file}: ${err.message}`, { cause: err })),
    );
    child.once('spawn', () =>
      resolve({
        child,
        contained: spec.held && spec.cgroup ? joinCgroup(spec.cgroup, child.pid as number, () => child.exitCode === null && child.signalCode === null) : Promise.resolve(contained),
      }),
    );
  });
}

/** The warden's descriptor of its end of the server's stdout (libuv's handle; undefined if node hides it). */
export function wardenEndOf(child: ServerProcess): number | undefined {
  const fd = (child.stdout as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

/**
 * Checks that the inode the kernel executed is the one that was digested, unmodified: same device and inode
 * behind /proc/PID/exe, and the same size, mtime and ctime. Throws EXEC_MISMATCH otherwise, or EXEC_HANDED_OFF
 * when the digested program (a shell shim) ran and exec'd another one (exec-handoff.ts).
 */
export function verifyExecuted(pid: number, expected: StatKey, file: string, context?: ExecContext): void {
  let actual: StatKey;
  try {
    actual = statKey(fs.statSync(`/proc/${pid}/exe`, { bigint: true }));
  } catch (err) {
    throw new WardenError('EXEC_MISMATCH', `cannot inspect /proc/${pid}/exe to verify that ${file} is what ran: ${(err as Error).message}`);
  }
  if (!sameInode(actual, expected)) {
    const mismatch = classifyMismatch(pid, expected, file);
    if (mismatch.kind === 'handed_off') throw new WardenError('EXEC_HANDED_OFF', handOffMessage(mismatch.ran, file, context));
    throw new WardenError('EXEC_MISMATCH', `the process executed inode ${actual.dev}:${actual.ino}, not the digested ${file} (inode ${expected.dev}:${expected.ino}): the file was replaced between digest and exec.`);
  }
  if (!sameKey(actual, expected)) {
    throw new WardenError('EXEC_MISMATCH', `${file} was modified between digest and exec (its size, mtime or ctime changed).`);
  }
}
