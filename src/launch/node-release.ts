import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

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
/** `node --version` prints one short line; anything longer is not a node release's answer. */
const MAX_ANSWER = 64;

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

/**
 * The release of the node executable at `file` with digest `sha256`: the warden's own when `own` (the same
 * executable), else the one recorded for that digest, else its answer to `--version` (node prints it before it
 * starts JavaScript: ~15 ms), recorded; undefined when it gives none that reads as one. Run only for an
 * interpreter already judged against the allowlist.
 */
export async function nodeRelease(file: string, sha256: string, own: boolean, memo: ReleaseMemo): Promise<[number, number, number] | undefined> {
  if (own) return parseRelease(process.version);
  const known = memo.get(sha256);
  if (known !== undefined && parseRelease(known)) return parseRelease(known);
  // In an empty directory of its own, removed after: whatever the executable writes where it stands (an
  // interpreter that is a wrapper script) lands nowhere the warden or the user keeps anything.
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-warden-node-release-'));
  const answer = await new Promise<string>((resolve) => {
    execFile(file, ['--version'], { env: {}, cwd, timeout: 5_000, maxBuffer: MAX_ANSWER, killSignal: 'SIGKILL' }, (err, stdout) => resolve(err ? '' : String(stdout).trim()));
  }).finally(() => fs.rmSync(cwd, { recursive: true, force: true }));
  const release = parseRelease(answer);
  if (release) memo.set(sha256, answer);
  return release;
}
