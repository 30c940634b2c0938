import fs from 'node:fs';
import { WardenError } from '../error.js';
import { parseElf } from './elf.js';
import { LD_PRELOAD_FILE, preloadNames } from './ld-preload.js';
import { neededObjects } from './libraries.js';
import { sameKey, statKey, type StatKey } from './stat-key.js';
import { isSystemLibrary } from './system-library.js';

// The warden cannot vouch for a server when code nobody digested was loaded into the warden itself before its
// first line ran: a preload in its own NODE_OPTIONS or on the node command line that started it, or a library
// the dynamic loader injected (LD_PRELOAD, LD_AUDIT). Such a warden has already run that code; whatever it
// would check afterwards could be what the preload wants it to see. So every verb that launches a server
// refuses to (WARDEN_PRELOADED, exit 3), before it writes or launches anything.
//
// Options of NODE_OPTIONS that do not load code (--max-old-space-size, --enable-source-maps...) are no reason
// to refuse; nor is LD_LIBRARY_PATH, a common setting of a user's shell that only moves where the libraries
// node links against are looked up (see src/store/servers.ts for the loader variables a *server* may not
// have, a stricter list). The options are the ones attest/plan.ts refuses on a server's node command line.

// Also the inspector: with it any local process can run code inside the warden.
const PRELOAD_OPTIONS = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader', '--env-file', '--openssl-config', '--snapshot-blob', '--inspect', '--inspect-brk', '--inspect-wait']);
/** Environment variables by which node's OpenSSL, or the dynamic loader, loads a library into the warden. */
const LOADING_VARIABLES = ['LD_PRELOAD', 'LD_AUDIT', 'OPENSSL_CONF', 'OPENSSL_MODULES', 'OPENSSL_ENGINES'];

/** NODE_OPTIONS split into words as node splits it: on spaces outside double quotes, the quotes removed
 *  wherever they are (`--re"quire"` is `--require`), a backslash inside quotes taking the next character. */
export function nodeOptionsWords(value: string): string[] {
  const words: string[] = [];
  let word = '';
  let quoted = false;
  let any = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as string;
    if (quoted && c === '\\' && i + 1 < value.length) {
      word += value[++i];
      any = true;
    } else if (c === '"') {
      quoted = !quoted;
      any = true;
    } else if (/\s/.test(c) && !quoted) {
      if (any) words.push(word);
      word = '';
      any = false;
    } else {
      word += c;
      any = true;
    }
  }
  if (any) words.push(word);
  return words;
}

/** The preloading options among node options, as given ("--require=/x.cjs", "-r /x.cjs"). */
function preloadOptions(words: readonly string[]): string[] {
  const found: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    const name = word.split('=')[0] as string;
    if (!PRELOAD_OPTIONS.has(name) && !name.startsWith('--inspect')) continue;
    found.push(word.includes('=') ? word : `${word} ${words[i + 1] ?? ''}`.trim());
  }
  return found;
}

/** What preloaded code into this process, in words, or undefined. */
export function preloadOf(env: NodeJS.ProcessEnv, execArgv: readonly string[]): string | undefined {
  const found: string[] = [];
  const nodeOptions = preloadOptions(nodeOptionsWords(env.NODE_OPTIONS ?? ''));
  if (nodeOptions.length > 0) found.push(`NODE_OPTIONS has ${nodeOptions.join(', ')}`);
  const argv = preloadOptions(execArgv);
  if (argv.length > 0) found.push(`node was started with ${argv.join(', ')}`);
  for (const name of LOADING_VARIABLES) if (env[name]) found.push(`${name} is set (${env[name]})`);
  return found.length > 0 ? found.join('; ') : undefined;
}

/** The libraries outside the system directories that /etc/ld.so.preload made ld.so load into this process (resolved
 *  as for a server's launch, attest/libraries.ts), in words, or undefined. Only read when the file exists. */
function systemPreloadOf(): string | undefined {
  const names = new Set(preloadNames());
  if (names.size === 0) return undefined;
  const node = fs.realpathSync(process.execPath);
  const foreign = neededObjects(node, parseElf(node)).filter((o) => names.has(o.as) && !isSystemLibrary(o.realpath));
  return foreign.length > 0 ? `${LD_PRELOAD_FILE} names ${foreign.map((o) => o.realpath).join(', ')}, outside the system's library directories` : undefined;
}

/** Throws WARDEN_PRELOADED when this process was started with a preload (see above). */
export function refuseIfPreloaded(env: NodeJS.ProcessEnv = process.env, execArgv: readonly string[] = process.execArgv): void {
  const what = preloadOf(env, execArgv) ?? systemPreloadOf();
  if (!what) return;
  throw new WardenError(
    'WARDEN_PRELOADED',
    `the warden itself was started with code loaded into it before it ran: ${what}. It has already run that code, so it cannot vouch for any server. Start mcp-warden without it (look at the environment the client or your shell gives it, e.g. the client entry's "env"; and /etc/ld.so.preload).`,
  );
}

/**
 * Whether the executable digested as `key` is the node binary running the warden now: the one file the warden
 * knows to be node, and not merely a file named node (an attested runtime of a package's own, say), which runs
 * its own code from its first instruction (docs/adr/0033-held-server-joins-its-cgroup.md).
 */
export function isOwnNode(key: StatKey | undefined): boolean {
  if (!key) return false;
  try {
    return sameKey(key, statKey(fs.statSync(process.execPath, { bigint: true })));
  } catch {
    return false;
  }
}
