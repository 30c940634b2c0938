import fs from 'node:fs';
import path from 'node:path';
import { sameKey, statKey, type StatKey } from '../attest/stat-key.js';

// When /proc/PID/exe is not the digested inode, two different things may have happened, and the refusal says
// which (both are refusals: the warden vouches only for what it digested):
// - the digested program ran and exec'd another one (a node_modules/.bin shell shim that execs node, a
//   launcher binary): the digested file is still at its path, unchanged, and what runs is another file at
//   another path;
// - the file was replaced between digest and exec: the digested path now holds another inode (rename over,
//   unlink and recreate), or resolves somewhere else (a directory swapped for a symlink), or is gone.

export interface ExecContext {
  serverId: string;
  /** The script the interpreter was started with, when the command is a "#!" script. */
  script?: string;
}

export type Mismatch = { kind: 'replaced' } | { kind: 'handed_off'; ran: string };

/** Tells a hand-off (the digested program exec'd `ran`) from a replacement, failing toward "replaced". */
export function classifyMismatch(pid: number, expected: StatKey, file: string): Mismatch {
  let link: string;
  try {
    link = fs.readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return { kind: 'replaced' };
  }
  if (link.endsWith(' (deleted)') || link === file) return { kind: 'replaced' };
  try {
    if (fs.realpathSync(file) !== file) return { kind: 'replaced' };
    if (!sameKey(statKey(fs.statSync(file, { bigint: true })), expected)) return { kind: 'replaced' };
  } catch {
    return { kind: 'replaced' };
  }
  return { kind: 'handed_off', ran: link };
}

const MAX_SHIM_BYTES = 64 * 1024;
const JS = /\.(?:c|m)?js$/;

/** The script a usual npm/pnpm/yarn shell shim runs with node (`exec node "$basedir/../pkg/cli.js" "$@"`). */
export function shimTarget(script: string): string | undefined {
  let text: string;
  try {
    const fd = fs.openSync(script, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const buf = Buffer.alloc(MAX_SHIM_BYTES);
      text = buf.subarray(0, fs.readSync(fd, buf, 0, MAX_SHIM_BYTES, 0)).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const basedir = path.dirname(script);
  for (const line of text.split('\n')) {
    const m = /^\s*exec\s+(.*)$/.exec(line);
    if (!m) continue;
    const words = (m[1] as string).match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
    for (const w of words.slice(1)) {
      const word = w.replace(/^["']|["']$/g, '').replace(/\$\{?basedir\}?/g, basedir);
      if (!JS.test(word) || word.includes('$')) continue;
      const target = path.resolve(basedir, word);
      try {
        return fs.realpathSync(target);
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** The sentence of an EXEC_HANDED_OFF refusal: what ran, and how to enroll the real command instead. */
export function handOffMessage(ran: string, file: string, ctx: ExecContext | undefined): string {
  const id = ctx?.serverId ?? '<id>';
  const what = ctx?.script ? `the script ${ctx.script} (run by ${file})` : file;
  const head = `${what} exec'd another program, ${ran}, which the warden did not digest, so it refused the launch (nothing was relayed).`;
  const target = ctx?.script ? shimTarget(ctx.script) : undefined;
  if (target) return `${head} Enroll the command the script runs instead: mcp-warden add ${id} -- ${ran} ${target}`;
  const where = ctx?.script ? `look in ${ctx.script} for the command it runs` : `find the command ${file} runs`;
  return `${head} Enroll the real command instead: ${where}, then: mcp-warden add ${id} -- ${ran} <its arguments>`;
}
