import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { WardenError } from '../error.js';
import { guardDenialLines, type GuardDenial, type GuardRead } from './guard-denials.js';
import { boundReport, parseReport, readReport, REPORT_CAP, withSeen, type GuardReport, type LearnedModule, type ReportBound, type ReportSeen } from './guard-report.js';
import { REQUIRE_ESM_OFF } from './node-release.js';
import { STATE_MAGIC, type GuardState } from './preload/guard.js';

// The warden's side of the module guard (docs/adr/0014-module-guard-preload.md): check the guard's files
// against the digests recorded when the warden was built, hand the attested set to the server through a gate
// (a socket on its file descriptor 3; nothing in the environment or argv) on which the server's node waits
// before loading any server code (docs/adr/0019-fast-launch.md), and, at enrollment, read back what the
// server loaded from outside the set.

export const PRELOAD_DIR = fileURLToPath(new URL('../launch/preload/', import.meta.url));
/** The warden's own install (a checkout, or the package npm installed): the directory above dist/, with its
 *  package.json and node_modules. Made, like PRELOAD_DIR, from a file one level below dist/ (scripts/bundle.mjs). */
export const INSTALL_ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
const GUARD_FILES = ['environment.js', 'fs-denials.js', 'guard.js', 'hooks.js', 'loaders.js', 'native.js', 'preload.js', 'workers.js'];
/** The report's descriptor in the server (the set is on 3, read and closed by the preload). */
const REPORT_FD = 4;

export type { GuardReport, LearnedModule };

/** The warden's end of the gate, as spawn returns it (child.stdio[3]). */
export type GateEnd = Writable | null | undefined;

/** What the guard reports besides modules (launch/guard-denials.ts): denied writes, and reads of `secrets`. */
export interface GuardDenials {
  denied: (d: GuardDenial | GuardRead) => void;
  max: number;
  secrets?: string[];
}

export interface ModuleGuard {
  /** Put before the script in node's argv. */
  args: string[];
  /** The child's stdio from fd 3 on: the gate (a socket) and the report file. */
  stdio: Array<'pipe' | number>;
  /** Releases the server: writes the attested set (every file digested and allowlisted for this launch) to the
   *  gate and closes it. Until then the server's node waits, having loaded none of the server's code. With
   *  `denials`, the guard reports the writes the kernel refused the server's fs calls, and its reads of `secrets`
   *  (launch/guard-denials.ts),
   *  read from then on until report() (one last look) or close(). */
  release(gate: GateEnd, files: Map<string, string>, denials?: GuardDenials): Promise<void>;
  /** After the server exited: at enrollment the files it loaded from outside the set, otherwise what the guard
   *  refused (a path or URL); and the ES modules the server require()d where node ran with require(esm) off
   *  (node answered ERR_REQUIRE_ESM). Reads and closes the report (at most its cap: past it, `overflow` says so,
   *  ./guard-report.ts); later calls return the same. */
  report(): GuardReport;
  /** Reads what the guard appended to its report since the last look (./guard-report.ts boundReport): called before
   *  each chunk of the server's stdout is judged, so a record written before a line the server sent is kept even if
   *  the server cuts the file right after. */
  look(): void;
  close(): void;
}

/** Checks the guard's files against dist/launch/preload/digests.json; returns the preload's URL. */
export function verifiedPreload(): string {
  const manifestPath = path.join(PRELOAD_DIR, 'digests.json');
  let manifest: Record<string, string>;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as Record<string, string>;
  } catch (err) {
    throw new WardenError('PRELOAD_INVALID', `cannot read ${manifestPath}, the digests of the warden's module guard recorded at build time: ${(err as Error).message}. Rebuild mcp-warden ('npm run build').`);
  }
  for (const name of GUARD_FILES) {
    const file = path.join(PRELOAD_DIR, name);
    let actual: string;
    try {
      actual = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    } catch (err) {
      throw new WardenError('PRELOAD_INVALID', `cannot read ${file}, part of the warden's module guard: ${(err as Error).message}. Reinstall or rebuild mcp-warden.`);
    }
    if (manifest[name] !== actual) {
      throw new WardenError('PRELOAD_INVALID', `${file}, part of the warden's module guard that is loaded into every node server, has sha256 ${actual}, not the ${manifest[name] ?? '(none)'} recorded in ${manifestPath} when the warden was built. Find out what changed it, then reinstall or rebuild mcp-warden.`);
    }
  }
  return pathToFileURL(path.join(PRELOAD_DIR, 'preload.js')).href;
}

/** An empty unlinked 0600 file in `dir`, open read-write (appending: the server's threads share it). */
function unlinkedFile(dir: string): number {
  const file = path.join(dir, `.module-guard-${process.pid}-${randomBytes(8).toString('hex')}`);
  const { O_CREAT, O_EXCL, O_RDWR, O_APPEND, O_NOFOLLOW } = fs.constants;
  const fd = fs.openSync(file, O_CREAT | O_EXCL | O_RDWR | O_APPEND | O_NOFOLLOW, 0o600);
  try {
    fs.unlinkSync(file);
    return fd;
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

/** The attested set as the preload reads it from the gate. */
function stateText(server: string, mode: 'enforce' | 'learn', files: Map<string, string>, denials: GuardDenials | undefined): string {
  const state: GuardState = { magic: STATE_MAGIC, server, mode, files: [...files.keys()], keys: [...files.values()], reportFd: REPORT_FD, ...(denials ? { denials: true as const } : {}), ...(denials?.secrets?.length ? { secrets: denials.secrets } : {}) };
  return JSON.stringify(state);
}

/** Settles when what was written to the gate is flushed, or rejects with the gate's error. */
function gateReleased(gate: Writable, serverId: string): { promise: Promise<void>; written: () => void } {
  let written = (): void => {};
  const promise = new Promise<void>((resolve, reject) => {
    written = () => resolve();
    gate.on('error', (err) => reject(new WardenError('LAUNCH_FAILED', `could not release server '${serverId}' to its module guard: ${err.message}`, { cause: err })));
  });
  return { promise, written };
}

/** Prepares the guard for one launch of `serverId`; `tmpDir` is a directory only the warden's user can write.
 *  `requireEsmOff`: the server's node loads a require()d ES module's imports where the guard cannot see them
 *  (./node-release.ts), so it starts with require(esm) off. */
export function prepareModuleGuard(serverId: string, mode: 'enforce' | 'learn', tmpDir: string, requireEsmOff = false): ModuleGuard {
  const preload = verifiedPreload();
  const open = new Set<number>();
  const reportFd = unlinkedFile(tmpDir);
  open.add(reportFd);
  let read: GuardReport | undefined;
  let bound: ReportBound | undefined;
  const closeFd = (fd: number | undefined): void => {
    if (fd !== undefined && open.delete(fd)) fs.closeSync(fd);
  };
  return {
    args: [...(requireEsmOff ? [REQUIRE_ESM_OFF] : []), '--import', preload],
    stdio: ['pipe', reportFd],
    release: (gate, files, denials) => {
      // The server can write to its report too: held to the cap on disk from the moment it may run.
      // The guard's reports of denied writes are lines of the same file, read by the same reader.
      bound ??= boundReport(reportFd, REPORT_CAP, denials && gate ? guardDenialLines(denials.denied, denials.max, denials.secrets) : undefined);
      if (!gate) return Promise.reject(new WardenError('LAUNCH_FAILED', `the module guard's gate to server '${serverId}' was not set up; the server was not released.`));
      const released = gateReleased(gate, serverId);
      // The set is written from a value no closure holds: the gate's listeners live as long as the session, and
      // a set they kept would be ~0.6 MB of strings for a tree of 4,400 files (docs/adr/0069-run-memory-on-node-24.md).
      gate.end(stateText(serverId, mode, files, denials), released.written);
      return released.promise;
    },
    look: () => bound?.look(),
    report: () => {
      if (read) return read;
      // Never throws: the session's exit event and every refusal seen so far must be recorded whatever the server
      // did to the file (a report that cannot be read counts as tampered with: fail closed).
      let seen: ReportSeen | undefined;
      try {
        seen = bound?.seen(); // what is left up to the cap, denied writes among it
        bound?.stop();
        bound = undefined;
        const got = open.has(reportFd) ? readReport(reportFd, REPORT_CAP) : { text: '', size: 0 };
        read = withSeen(parseReport(got.text, mode), seen, got.size);
      } catch {
        bound?.stop();
        bound = undefined;
        const bytes = seen?.largest ?? 0;
        read = { learned: [], refused: seen?.refused ?? [], requireEsm: seen?.requireEsm ?? [], overflow: { bytes, cap: REPORT_CAP, why: 'unreadable' } };
      }
      try {
        closeFd(reportFd);
      } catch {
        // already closed under it: nothing more to read
      }
      return read;
    },
    close: () => {
      bound?.stop();
      bound = undefined;
      for (const fd of [...open]) closeFd(fd);
    },
  };
}
