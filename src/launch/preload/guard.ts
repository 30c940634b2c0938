import fs from 'node:fs';
import nodeUrl from 'node:url';

// The module guard's one decision, shared by the preload (CommonJS loads, native addons) and the loader hooks
// (ES modules): a file may be loaded when its realpath is in the attested set the warden passed in. This file
// runs inside the server's process: it imports node built-ins only, and never hashes (the warden digested
// everything before launch; see docs/adr/0014-module-guard-preload.md).

/** The exit status of a server the guard ended (EX_NOPERM). */
export const EXIT_REFUSED = 77;
export const STATE_MAGIC = 'mcp-warden-attested-set';

export interface GuardState {
  magic: typeof STATE_MAGIC;
  server: string;
  /** `enforce` refuses what is outside the set; `learn` (enrollment) records it on `reportFd` instead. */
  mode: 'enforce' | 'learn';
  /** Realpaths of every file the server may load. */
  files: string[];
  /** The stat key each file had when it was digested (same order): a file is loaded only while it has it. */
  keys: string[];
  /** Where the warden reads what was refused (enforce) or loaded from outside the set (learn), one JSON a line. */
  reportFd: number;
  /** Whether the server's fs calls that the kernel refused a write are reported on `reportFd` (fs-denials.ts). */
  denials?: true;
  /** With `denials`: absolute paths whose reads through node's fs are reported too (listed secret paths). */
  secrets?: string[];
}

export function isGuardState(x: unknown): x is GuardState {
  const s = x as GuardState;
  return typeof s === 'object' && s !== null && s.magic === STATE_MAGIC && typeof s.server === 'string' && (s.mode === 'enforce' || s.mode === 'learn') && Array.isArray(s.files) && Array.isArray(s.keys) && s.keys.length === s.files.length && typeof s.reportFd === 'number';
}

export interface Guard {
  /** Checks a file about to be loaded; returns only when it may be, with the name to hand the loader: the real
   *  path that was checked (the kernel's reading of the name), or the name as given when nothing is there. */
  file(p: string): string;
  /** Checks a module URL about to be loaded (file:, node:, anything else). */
  url(u: string): void;
  /** Reports `tried to load WHAT` + `why` on stderr and ends the server. */
  refuse(what: string, why: string): never;
  /** Records that the server require()d `p`, which node loads only as an ES module, where the warden started
   *  node with require(esm) off (node threw ERR_REQUIRE_ESM to the server; `add` says so). */
  requireEsm(p: string): void;
  /** A copy of the set this guard decides with, never the guard's own, for a worker thread this thread starts
   *  (workers.ts): the thread's own environment data under a key only it knows, which node clones for the worker. */
  handDown(): GuardState;
}

// Taken when the guard is loaded, before any server code: a server replacing fs.realpathSync or fs.lstatSync
// later does not change what the guard sees.
const { lstatSync, statSync, writeSync } = fs;
/** realpath(3): the kernel's reading of a name ("link/.." is where link leads, then up), not node's lexical one,
 *  which removes "x/.." before following any link and so could name another file than the one opened. */
const realpathSync = fs.realpathSync.native;
/** Read from node:url once, here: a named import of a built-in is a live binding, which
 *  module.syncBuiltinESMExports() (a public API) points at whatever the server put on node:url since. */
const fileURLToPath = nodeUrl.fileURLToPath;

// Taken when the guard is loaded, in every thread before any server code runs there.
const kill = process.kill.bind(process);
const pid = process.pid;

/**
 * Ends the whole server process at once: `exit` first when given (an exit of node's that ends the process, but may
 * throw when an 'exit' listener does, or end a thread only), then SIGKILL, waited for.
 */
export function endProcess(exit?: () => void): never {
  try {
    exit?.();
  } catch {
    // a listener threw: the kill below
  }
  kill(pid, 'SIGKILL');
  for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000); // the signal is on its way
}

/** Whether something is there to be loaded (anything but "no such file" counts, so an error fails closed). */
function reachable(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code !== 'ENOENT' && code !== 'ENOTDIR';
  }
}

function statKeyOf(p: string): string {
  try {
    const st = lstatSync(p, { bigint: true });
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return '';
  }
}

/** `end` stops the whole server process; it is called after the report is on stderr. */
export function createGuard(given: GuardState, end: () => never): Guard {
  // The guard's own copy, made before any server code runs: the object it was given may be reachable by the
  // server (node's environment data hands the thread that set a value the very object), its copy is not.
  const state: GuardState = copyState(given);
  const allowed = new Map(state.files.map((f, i) => [f, state.keys[i] as string]));
  const learned = new Set<string>();
  const report = (record: object): void => {
    try {
      writeSync(state.reportFd, JSON.stringify(record) + '\n');
    } catch {
      // the server closed it: stderr and the exit status still say what happened
    }
  };
  const refuse = (what: string, why: string): never => {
    try {
      report({ refused: what });
      writeSync(2, `mcp-warden: server '${state.server}' tried to load ${what}${why}. The warden's module guard ended the server (exit ${EXIT_REFUSED}).\n`);
    } catch {
      // the server closed its stderr: nothing may keep the refusal from ending it (the exit status still says)
    }
    return end();
  };
  /** A file of the set may be loaded only while it is as it was digested (no write since, no swap). */
  const unchanged = (p: string): boolean => {
    const key = allowed.get(p);
    if (key === undefined) return false;
    if (statKeyOf(p) === key) return true;
    return refuse(p, ', which changed after the warden digested it for this launch (written to, or replaced). Find out what writes to it, then start the server again');
  };
  const file = (p: string): string => {
    if (unchanged(p)) return p;
    let real: string;
    try {
      real = realpathSync(p);
    } catch {
      if (!reachable(p)) return p; // no such file: the loader reports that itself
      // A file with no path of its own (a deleted file through /proc/self/fd/N) cannot be matched with the set.
      return refuse(p, ', which has no path of its own to check against its attested set (a deleted file, or a descriptor of one)');
    }
    if (unchanged(real)) return real;
    if (state.mode === 'learn') {
      if (!learned.has(real)) report({ path: real, key: statKeyOf(real) });
      learned.add(real);
      return real;
    }
    return refuse(
      real,
      `, which is outside its attested set (its script, its package tree and the modules recorded when it was enrolled). ` +
        `If the server needs that file, list it under "modules" of server '${state.server}' in servers.json and allowlist it as a module (docs/formats.md), or enroll the server again`,
    );
  };
  const url = (u: string): void => {
    if (u.startsWith('node:')) return;
    if (u.startsWith('file:')) {
      file(fileURLToPath(u)); // the ES loader opens the URL as resolved, already free of ".." (URL parsing)
      return;
    }
    refuse(u.length > 100 ? `${u.slice(0, 100)}…` : u, '; only files of its attested set and node: built-ins may be loaded');
  };
  const requireEsm = (p: string): void => report({ requireEsm: p });
  // Copied now, before any server code: node's environment data clones it into each worker it is handed to.
  const handed = copyState(state);
  const handDown = (): GuardState => handed;
  return { file, url, refuse, requireEsm, handDown };
}

/** A new set with the same members, sharing nothing with `s`. */
function copyState(s: GuardState): GuardState {
  return { magic: STATE_MAGIC, server: s.server, mode: s.mode, files: s.files.slice(), keys: s.keys.slice(), reportFd: s.reportFd, ...(s.denials === true ? { denials: true as const } : {}), ...(Array.isArray(s.secrets) ? { secrets: s.secrets.slice() } : {}) };
}
