import fs from 'node:fs';
import nodePath from 'node:path';
import nodeUrl from 'node:url';

// Denied writes as a node server's own fs module met them, for a warden that cannot see the kernel's refusals
// (not root: no bpftrace; docs/adr/0068-denied-writes-reported-by-the-guard.md). When the warden asks for it in
// the attested set, the guard wraps node's public fs functions that create, remove, rename or change a name (and
// open with a write flag): a call that fails EROFS, EACCES or EPERM writes one line to the guard's report file,
// which the warden reads while the session runs. Advisory: this runs in the server's process, so a server that
// writes through process.binding, native code or a child process is not seen, and one that writes lines of its
// own to the report file is believed only as far as a report goes (bounded, escaped, never acted on). Where the
// warden places no decoys, it also hands a list of secret paths (~/.ssh/id_rsa...): a read of one through node's
// fs (readFile, open for reading, createReadStream) is reported, whatever it returned (the home is hidden).

/** The errnos reported: a read-only mount, a mode, a dropped capability. */
const DENIED = new Set(['EROFS', 'EACCES', 'EPERM']);
/** Reports per thread: the warden records at most 64 a session. */
const MAX_REPORTS = 65;
/** Characters of a path kept in a report. */
const MAX_PATH = 1024;

/** fs functions that write a name whatever their arguments (callback form; `Sync` and fs.promises alike). */
const WRITERS = ['writeFile', 'appendFile', 'mkdir', 'mkdtemp', 'rmdir', 'rm', 'unlink', 'rename', 'copyFile', 'cp', 'symlink', 'link', 'truncate', 'chmod', 'lchmod', 'chown', 'lchown', 'utimes', 'lutimes'];
/** O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND. */
const WRITE_FLAGS = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000;

/** Whether open's flags (a string like 'w', 'a+', 'r+', or a number) ask to write; node's default is 'r'. */
function writesByFlags(flags: unknown): boolean {
  if (typeof flags === 'number') return (flags & WRITE_FLAGS) !== 0;
  return typeof flags === 'string' && /[wa+]/.test(flags);
}

/** Wraps the functions of `fsModule` (node:fs) so that a denied write, and a read of one of `secrets`, is written
 *  to `reportFd`. */
export function reportDeniedWrites(fsModule: typeof fs, reportFd: number, secrets: readonly string[] = []): void {
  const { writeSync } = fsModule; // node's own, taken before any server code runs
  const { resolve } = nodePath;
  const { fileURLToPath } = nodeUrl;
  const secret = new Set(secrets);
  let reports = 0;
  /** The secret path `p` (a string, Buffer or file: URL) names, or undefined. */
  const secretOf = (p: unknown): string | undefined => {
    if (secret.size === 0) return undefined;
    try {
      const name = typeof p === 'string' ? p : Buffer.isBuffer(p) ? p.toString('utf8') : p instanceof URL ? fileURLToPath(p) : undefined;
      const full = name === undefined ? undefined : resolve(name);
      return full !== undefined && secret.has(full) ? full : undefined;
    } catch {
      return undefined;
    }
  };
  // A call of node's made inside another wrapped one (readFileSync opens through fs.openSync) is the same read.
  let depth = 0;
  const read = (args: unknown[]): void => {
    if (depth > 0) return;
    const p = secretOf(args[0]);
    if (p === undefined || reports >= MAX_REPORTS) return;
    reports++;
    try {
      writeSync(reportFd, `${JSON.stringify({ read: { path: p } })}\n`);
    } catch {
      // the report file is gone: nothing to tell
    }
  };
  // One call of node's may make another (writeFileSync opens through fs.openSync): the error it passes up is one.
  const told = new WeakSet<object>();
  const seen = (err: unknown, fallback: string): void => {
    const e = err as { code?: unknown; syscall?: unknown; path?: unknown; dest?: unknown } | null;
    if (reports >= MAX_REPORTS || typeof e !== 'object' || e === null || told.has(e) || typeof e.code !== 'string' || !DENIED.has(e.code)) return;
    told.add(e);
    // The name written: the destination of rename, link, symlink and copyFile, else the path.
    const p = typeof e.dest === 'string' ? e.dest : typeof e.path === 'string' ? e.path : undefined;
    if (p === undefined) return;
    reports++;
    const call = typeof e.syscall === 'string' && /^[a-z0-9_]{1,32}$/.test(e.syscall) ? e.syscall : fallback;
    try {
      writeSync(reportFd, `${JSON.stringify({ denied: { call, errno: e.code, path: p.slice(0, MAX_PATH), ...(p.length > MAX_PATH ? { truncated: true } : {}) } })}\n`);
    } catch {
      // the report file is gone: nothing to tell
    }
  };
  const wrap = (target: Record<string, unknown>, name: string, style: 'sync' | 'callback' | 'promise', writes: (args: unknown[]) => boolean, reads?: (args: unknown[]) => boolean): void => {
    const original = target[name];
    if (typeof original !== 'function') return;
    const fn = original as (...args: unknown[]) => unknown;
    /** node's function, with a denied write it meets reported. */
    const call = (self: unknown, args: unknown[]): unknown => {
      if (!writes(args)) return Reflect.apply(fn, self, args);
      if (style === 'sync') {
        try {
          return Reflect.apply(fn, self, args);
        } catch (err) {
          seen(err, name);
          throw err;
        }
      }
      if (style === 'promise') {
        return (Reflect.apply(fn, self, args) as Promise<unknown>).catch((err: unknown) => {
          seen(err, name);
          throw err;
        });
      }
      const last = args.length - 1;
      const cb = args[last];
      if (typeof cb === 'function') {
        args[last] = function (this: unknown, err: unknown, ...rest: unknown[]): unknown {
          if (err) seen(err, name);
          return Reflect.apply(cb as (...a: unknown[]) => unknown, this, [err, ...rest]);
        };
      }
      return Reflect.apply(fn, self, args);
    };
    const wrapped = {
      [name](this: unknown, ...args: unknown[]): unknown {
        if (reads?.(args)) read(args);
        depth++;
        try {
          return call(this, args);
        } finally {
          depth--;
        }
      },
    }[name] as (...args: unknown[]) => unknown;
    Object.defineProperty(wrapped, 'length', { value: fn.length });
    target[name] = wrapped;
  };
  const always = (): boolean => true;
  const never = (): boolean => false;
  const opens = (args: unknown[]): boolean => writesByFlags(typeof args[1] === 'function' ? undefined : args[1]);
  const openReads = (args: unknown[]): boolean => !opens(args);
  const mod = fsModule as unknown as Record<string, unknown>;
  const promises = fsModule.promises as unknown as Record<string, unknown>;
  for (const name of WRITERS) {
    wrap(mod, name, 'callback', always);
    wrap(mod, `${name}Sync`, 'sync', always);
    wrap(promises, name, 'promise', always);
  }
  // createWriteStream opens through fs.open (the module's, looked up at each open).
  wrap(mod, 'open', 'callback', opens, openReads);
  wrap(mod, 'openSync', 'sync', opens, openReads);
  wrap(promises, 'open', 'promise', opens, openReads);
  if (secret.size === 0) return;
  // readFile opens through node's own binding (not fs.open): its reads are taken here.
  wrap(mod, 'readFile', 'callback', never, always);
  wrap(mod, 'readFileSync', 'sync', never, always);
  wrap(promises, 'readFile', 'promise', never, always);
}
