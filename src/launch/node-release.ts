import fs from 'node:fs';

// Which node release a server's interpreter is, for what the module guard must do there that argv decides:
// on node 20.17+, 22.0–22.14 and 23.0–23.4 node loads the imports of an ES module that require() loads
// (require(esm)) in its own thread, where no loader hook of the guard sees them (the guard's ES check runs on
// node's loader-hooks thread there; from 22.15 and 23.5 it runs in the loading thread and sees them). On those
// releases the warden starts node with require(esm) off (docs/adr/0049-require-esm-on-node-20.md).

/** The option that turns require(esm) off, and with it the "module-sync" export condition. */
export const REQUIRE_ESM_OFF = '--no-experimental-require-module';
/** The node releases whose module guard checks what a require()d ES module imports. */
export const GUARDS_REQUIRE_ESM = 'node 22.15 or later';

const VERSION = /^v(\d{1,4})\.(\d{1,4})\.(\d{1,4})$/;

/** [major, minor, patch] of a "vX.Y.Z" version string, or undefined. */
export function parseRelease(version: string): [number, number, number] | undefined {
  const m = VERSION.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** Whether this release has require(esm) (on, or behind the option) and no in-thread loader hooks. */
export function loadsRequiredEsmUnguarded([major, minor]: [number, number, number]): boolean {
  if (major === 20) return minor >= 17;
  if (major === 22) return minor < 15;
  if (major === 23) return minor < 5;
  return false;
}

/** Where the releases of interpreters already asked are kept, by the executable's sha256 (store/node-releases.ts). */
export interface ReleaseMemo {
  get(sha256: string): string | undefined;
  set(sha256: string, release: string): void;
}

/** The longest node executable read for its release (official builds are ~100-125 MB). */
const MAX_EXECUTABLE = 512 * 1024 * 1024;
/** How node's own build names its release in the binary: first the release's source and headers tarballs
 *  (process.release: "node-vX.Y.Z.tar.gz", four times), else its user agent ("node.js/vX.Y.Z", whose tail is the
 *  string process.version: the linker keeps one copy of both). One mark a pass: a search costs ~50 ms a mark on a
 *  100 MB binary, most of it in a pass over the file. */
const MARKS = [Buffer.from('node-v'), Buffer.from('node.js/v')];
const NUMBER = /^(\d{1,4}\.\d{1,4}\.\d{1,4})(?![\d.]*\d)/;
/** The bytes after a mark that can hold a release and what settles where it ends. */
const AFTER = 16;
/** Bytes kept from one chunk for the next, so that a name split across two chunks is still seen whole. */
const OVERLAP = 9 + AFTER;

/** Adds to `into` the releases named after `mark` in `bytes`, up to those whose name could go on past `settled`. */
function namesIn(bytes: Buffer, settled: number, mark: Buffer, into: Set<string>): void {
  for (let at = bytes.indexOf(mark); at !== -1; at = bytes.indexOf(mark, at + 1)) {
    const from = at + mark.length;
    if (from + AFTER > settled) break;
    const m = NUMBER.exec(bytes.toString('latin1', from, from + AFTER));
    if (m) into.add(m[1] as string);
  }
}

/** The releases a file names after `mark`; stops at a second one (undefined when larger than an executable). */
async function releasesNamed(file: string, mark: Buffer): Promise<Set<string> | undefined> {
  const named = new Set<string>();
  let tail = Buffer.alloc(0);
  let read = 0;
  const stream = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      read += chunk.length;
      if (read > MAX_EXECUTABLE) return undefined;
      // A name near the chunk's end may go on in the next: it is read there, from the tail kept.
      const bytes = tail.length ? Buffer.concat([tail, chunk]) : chunk;
      namesIn(bytes, bytes.length, mark, named);
      if (named.size > 1) return named;
      tail = Buffer.from(bytes.subarray(Math.max(0, bytes.length - OVERLAP)));
    }
  } finally {
    stream.destroy();
  }
  namesIn(Buffer.concat([tail, Buffer.alloc(AFTER)]), tail.length + AFTER, mark, named);
  return named;
}

/** The one release a node executable names in its bytes, "vX.Y.Z"; undefined when it names none or several. */
async function releaseNamedIn(file: string): Promise<string | undefined> {
  for (const mark of MARKS) {
    const named = await releasesNamed(file, mark);
    if (named === undefined || named.size > 1) return undefined;
    if (named.size === 1) return `v${[...named][0]}`;
  }
  return undefined;
}

/**
 * The release of the node executable at `file` with digest `sha256`: the warden's own when `own` (the same
 * executable), else the one recorded for that digest, else the one its bytes name (read once, recorded).
 * Undefined when it names none, or several: such a node starts as it would without the option, and the module
 * guard checks in its own process what node's release decides there. The interpreter is never run for this: it
 * runs only as the launch's server, inside the launch's containment (docs/adr/0058-node-release-read-not-run.md).
 */
export async function nodeRelease(file: string, sha256: string, own: boolean, memo: ReleaseMemo): Promise<[number, number, number] | undefined> {
  if (own) return parseRelease(process.version);
  const known = memo.get(sha256);
  if (known !== undefined && parseRelease(known)) return parseRelease(known);
  let named: string | undefined;
  try {
    named = await releaseNamedIn(file);
  } catch {
    return undefined; // unreadable: the launch's own checks refuse a file that is not there or not the attested one
  }
  const release = named === undefined ? undefined : parseRelease(named);
  if (release) memo.set(sha256, named as string);
  return release;
}
