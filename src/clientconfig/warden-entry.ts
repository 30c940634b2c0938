import fs from 'node:fs';
import path from 'node:path';
import { loaderVariable, ENV_NAME_RE, SERVER_ID_RE } from '../store/servers.js';
import { printable } from '../escape.js';
import { hostVariables } from './env-vars.js';
import { isWardenVariable } from './warden-env.js';

// Whether a client entry already launches the warden. Proved, not guessed from words: the entry's program must
// be this warden itself, as a client would start it, with nothing else that could change what runs or where
// the warden reads its trust. An entry that names mcp-warden anywhere and is not exactly that is a disguise
// (`sh -c '<anything> #' mcp-warden run fs`, `node evil.js <warden> run fs`, a project's own script called
// mcp-warden) and is refused: left alone as "already", a client would run it outside the warden.
//
// Exactly one of (paths absolute; the same file as this warden's, compared by real path):
//   <this warden's script> REST          the npm bin link (its `#!/usr/bin/env node` finds node on PATH, so the
//                                        entry's env may not set PATH)
//   <this node> <this warden's script> REST
// where REST is `run ID`, `--home DIR run ID` or `--home=DIR run ID` (DIR absolute, ID a server id); its env sets
// no variable the warden reads itself (warden-env.ts) and no loader variable; and it has no envFile.
// Every word is literal: clients expand variables in `command` and `args` before they start it (VS Code and
// Cursor `${workspaceFolder}`, `${userHome}`, `${env:X}`; Claude Code `${VAR}`; Gemini `$VAR`; Windows-style
// `%VAR%`), and a variable of several path components makes the `..` after it land elsewhere than a lexical
// reading says. So no word holds `$` or `%`, and DIR is written in its normal form (no `.`, `..` or `//` part):
// the home the client starts the warden on is then DIR as written, compared with this home as a string
// (import.ts). Nothing else of the entry can move the home: the variables that could are refused by name, in any
// value, and `cwd` is never read (every word is absolute).

export interface Self {
  /** The warden's script (argv[1] of the warden running import). */
  script: string;
  /** The node running import. */
  node: string;
}

export type WardenEntry = { kind: 'launch'; id: string; home?: string } | { kind: 'disguised'; reason: string };

/** Whether `p` and every directory above it are root's and written by no one else (a root-owned sticky
 *  directory such as /tmp is no such directory: anyone may add a name to it). */
function rootOwnedChain(p: string): boolean {
  for (let at = p; ; at = path.dirname(at)) {
    const st = fs.lstatSync(at);
    if (st.uid !== 0 || st.mode & 0o022) return false;
    if (path.dirname(at) === at) return true;
  }
}

/** `a` names the file `b` names, for every process that starts it: `b` as written or its real path; another
 *  path only when it resolves there and can be re-pointed by no one but root (an npm bin link in /usr/local/bin).
 *  Never a relative path (the client resolves it against its PATH or cwd), nor one under /proc or /dev
 *  (/proc/self/exe is the node running import here, and the client's own program when the client starts it). */
function sameFile(a: string, b: string): boolean {
  if (!path.isAbsolute(a) || /^\/(proc|dev)\//.test(path.normalize(a))) return false;
  try {
    const real = fs.realpathSync(b);
    if (a === b || a === real) return true;
    return fs.realpathSync(a) === real && rootOwnedChain(a);
  } catch {
    return a === b;
  }
}

function namesWarden(word: string, self: Self): boolean {
  return path.basename(word) === 'mcp-warden' || /(^|\/)mcp-warden\/dist\/cli\/main\.js$/.test(word) || sameFile(word, self.script);
}

/** `run ID`, `--home DIR run ID`, `--home=DIR run ID`, else undefined. */
function runWords(rest: string[]): { id: string; home?: string } | undefined {
  const [a, b, c, d] = rest;
  const id = (w: string | undefined): w is string => w !== undefined && SERVER_ID_RE.test(w);
  const home = (w: string | undefined): w is string => w !== undefined && path.isAbsolute(w) && path.normalize(w) === w;
  if (rest.length === 2 && a === 'run' && id(b)) return { id: b };
  if (rest.length === 4 && a === '--home' && home(b) && c === 'run' && id(d)) return { id: d, home: b };
  if (rest.length === 3 && a?.startsWith('--home=') && home(a.slice(7)) && b === 'run' && id(c)) return { id: c, home: a.slice(7) };
  return undefined;
}

/** What the entry `o` is with respect to this warden: its launch, a disguise of it, or neither (undefined). */
export function wardenEntry(o: Record<string, unknown>, self: Self): WardenEntry | undefined {
  const command = typeof o.command === 'string' ? o.command : '';
  const args = Array.isArray(o.args) ? o.args.map((a) => (typeof a === 'string' ? a : '')) : [];
  if (![command, ...args].some((w) => namesWarden(w, self))) return undefined;
  const disguised = (why: string): WardenEntry => ({ kind: 'disguised', reason: `it names mcp-warden but is not this warden's own launch: ${why}. Left as it is, a client would run it as written, outside the warden. Replace the entry with the server's own command line (or with '${self.node} ${self.script} --home <home> run <id>'), then import again` });
  if (o.args !== undefined && (!Array.isArray(o.args) || o.args.some((a) => typeof a !== 'string'))) return disguised('"args" is not a list of strings');
  const expanded = [command, ...args].find((w) => /[$%]/.test(w));
  if (expanded !== undefined) return disguised(`its command line holds "${printable(expanded, 200)}", with "$" or "%", which a client may expand (\${workspaceFolder}, \${userHome}, \${env:X}, \${VAR}, $VAR, %VAR%) before it starts the warden, so where the warden reads its trust would not be known here`);
  const viaBin = sameFile(command, self.script);
  let rest: string[];
  if (viaBin) rest = args;
  else if (sameFile(command, self.node) && args[0] !== undefined && sameFile(args[0], self.script)) rest = args.slice(1);
  else return disguised(`its program is not this warden's script (${self.script}), nor this node (${self.node}) with that script as its first argument`);
  const run = runWords(rest);
  if (!run) return disguised("its command line holds more than '[--home DIR] run ID' after the warden (DIR an absolute path in its normal form, without '.', '..' or '//' parts; ID a server id)");
  if (o.envFile !== undefined) return disguised('it has an "envFile", whose variables the client gives the warden unseen');
  if (o.env !== undefined) {
    if (!o.env || typeof o.env !== 'object' || Array.isArray(o.env)) return disguised('its "env" is not an object');
    for (const name of Object.keys(o.env)) {
      if (!ENV_NAME_RE.test(name)) return disguised('its "env" names something that is not an environment variable name');
      if (isWardenVariable(name) || loaderVariable(name)) return disguised(`its "env" sets ${name}, which the warden reads itself (where its home is, or how node runs it)`);
      if (viaBin && name === 'PATH') return disguised('its "env" sets PATH, where the warden script\'s "#!/usr/bin/env node" finds node');
    }
  }
  const host = hostVariables(o.env_vars);
  if ('reason' in host) return disguised(host.reason);
  if (viaBin && host.names.includes('PATH')) return disguised('its "env_vars" passes PATH, where the warden script\'s "#!/usr/bin/env node" finds node');
  return { kind: 'launch', ...run };
}
