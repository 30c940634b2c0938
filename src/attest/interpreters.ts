import path from 'node:path';
import { WardenError } from '../error.js';

// Which argument of an interpreter's command line is the script it runs, and which options may come before it.
// `python3 server.py` runs server.py as surely as a "#!" line would, so the script is digested like node's;
// options that make the interpreter run code no file holds (`-c`, `-m`, `-e`, stdin) are refused, and so is
// any option not on the family's short list of those that load nothing. The lists say what is permitted, not
// what is refused: an interpreter's next version adds options, and the warden must not misread one (taking its
// value for the script, or the script for its value). docs/formats.md lists them with their reasons.

export type Family = 'node' | 'python' | 'shell' | 'perl' | 'ruby' | 'php' | 'lua';

// By the basename of the interpreter's realpath: `python3` is a link to `python3.11`, `sh` to `dash`. Matching
// a program that is not an interpreter only refuses its command line (fail closed); missing an interpreter
// leaves its script undigested, so versioned and build-suffixed names are included.
const FAMILY_NAMES: [RegExp, Family][] = [
  [/^(node|nodejs)$/, 'node'],
  [/^(python|pypy)(\d+(\.\d+)?)?[dmt]?$/, 'python'],
  [/^(sh|ash|bash|dash|zsh|ksh|ksh93|mksh|lksh|yash|posh)$/, 'shell'],
  [/^perl(\d+(\.\d+)*)?$/, 'perl'],
  [/^ruby(\d+(\.\d+)*)?$/, 'ruby'],
  [/^php(\d+(\.\d+)*)?(-cli)?$/, 'php'],
  [/^(lua(\d+(\.\d+)?)?|luajit)$/, 'lua'],
];

/** The interpreter family of an ELF executable, or undefined for any other program. busybox chooses what it
 *  runs by its argv[0], which the warden passes as configured, so for busybox the command's name decides. */
export function interpreterFamily(realpath: string, command: string): Family | undefined {
  let name = path.basename(realpath);
  if (name === 'busybox') name = path.basename(command);
  return FAMILY_NAMES.find(([re]) => re.test(name))?.[1];
}

// Node options a server's command line may carry before its script: they tune the runtime and make node
// load or run nothing of their own. Node has many options that run code nobody digested (--require, --import,
// --loader, --eval; --env-file, whose NODE_OPTIONS node honours; --openssl-config, which loads shared
// libraries; --snapshot-blob, which runs a snapshot instead of the script and skips every --import; --inspect,
// which lets any local process run code in the server). Options with a value are taken in their
// `--name=value` form only, so that a value is never read as the script.
const NODE_FLAGS = new Set([
  '--enable-source-maps', '--no-warnings', '--no-deprecation', '--trace-warnings', '--trace-deprecation',
  '--trace-uncaught', '--trace-exit', '--throw-deprecation', '--pending-deprecation', '--abort-on-uncaught-exception',
  '--no-addons', '--frozen-intrinsics', '--disallow-code-generation-from-strings', '--use-bundled-ca', '--use-openssl-ca',
  '--experimental-vm-modules', '--experimental-detect-module', '--no-experimental-detect-module',
  '--experimental-require-module', '--no-experimental-fetch', '--no-experimental-global-webcrypto',
  '--tls-min-v1.2', '--tls-min-v1.3', '--expose-gc',
]);
const NODE_VALUED = new Set([
  '--max-old-space-size', '--max-semi-space-size', '--stack-size', '--stack-trace-limit', '--unhandled-rejections',
  '--disable-warning', '--dns-result-order', '--title', '--experimental-default-type', '--max-http-header-size',
]);

interface Who {
  serverId: string;
  /** The command as configured, for the command the messages suggest. */
  command: string;
  /** Its name, for the messages. */
  name: string;
}

interface Inline {
  /** What the option makes the interpreter do, after "which". */
  does: string;
  /** What to do instead. */
  instead: (w: Who) => string;
}

interface Rules {
  /** Single-letter options that take no value; they may be clustered (`-uB`). */
  flags: string;
  /** Single-letter options that take a value, with the values permitted. */
  valued: Record<string, RegExp>;
  /** Whether a value may be attached (`-Xutf8`); otherwise the option ends its word and the value is the next. */
  attached: boolean;
  /** Whole words permitted as options. */
  words?: RegExp;
  /** Options that run code no file holds, by letter (or whole word). */
  inline: Record<string, Inline>;
  /** Whether `--` ends the options (php reads its program from stdin when `--` comes first). */
  dashDash: boolean;
  /** Whether a word starting with `+` is an option too (shells: `+x`). */
  plus: boolean;
}

const scriptFile = (w: Who, file = '/path/to/script'): string => `mcp-warden add ${w.serverId} -- ${w.command} ${file}`;
const CODE_ARG: Inline = { does: 'runs code given on the command line, not a file the warden digests', instead: (w) => `Put that code in a script and give the script file itself: ${scriptFile(w)}` };
const STDIN: Inline = { does: 'reads its program from stdin, which is the MCP stream', instead: (w) => `Give the script file itself: ${scriptFile(w)}` };
const byName = (how: string): Inline => ({ does: 'loads a module looked up by name, not a file the warden digests', instead: () => `Load it in the script instead (${how}).` });

const RULES: Record<Exclude<Family, 'node'>, Rules> = {
  // -E -s -S -I -P only take things away (PYTHON* variables, user site-packages, site, the script's directory
  // on sys.path); -W is refused because a warning category `module.Class` is imported by name.
  python: {
    flags: 'bBEIOPqsSuv',
    valued: { X: /^(utf8(=[01])?|dev|faulthandler|importtime(=\d)?|tracemalloc(=\d+)?|int_max_str_digits=\d+|warn_default_encoding|no_debug_ranges|frozen_modules=(on|off))$/ },
    attached: true,
    inline: {
      c: CODE_ARG,
      m: {
        does: 'runs a module looked up by name on sys.path, not a file the warden digests',
        instead: (w) => `Give a file instead: the entry-point script its package installed (a "#!" script, e.g. mcp-warden add ${w.serverId} -- /path/to/venv/bin/NAME), or the module's own file: ${scriptFile(w, '/path/to/module.py')}`,
      },
      i: { does: 'runs an interactive prompt after the script that reads code from stdin, which is the MCP stream', instead: () => 'Leave it out.' },
    },
    dashDash: true,
    plus: false,
  },
  // -l/--login, --rcfile and interactive shells read profile and rc files; -s and -i read commands from stdin.
  shell: {
    flags: 'efuvx',
    valued: { o: /^(errexit|nounset|xtrace|verbose|noglob|noclobber|pipefail)$/ },
    attached: false,
    inline: { c: CODE_ARG, s: { does: 'reads its commands from stdin, which is the MCP stream', instead: STDIN.instead }, i: { does: 'runs an interactive shell, which reads rc files and then commands from stdin', instead: STDIN.instead } },
    dashDash: true,
    plus: true,
  },
  perl: {
    flags: 'tTwWX',
    valued: {},
    attached: false,
    inline: { e: CODE_ARG, E: CODE_ARG, M: byName('`use Module;`'), m: byName('`use Module ();`') },
    dashDash: true,
    plus: false,
  },
  ruby: {
    flags: 'w',
    valued: {},
    attached: false,
    words: /^--disable[-=][a-z_,-]+$/,
    inline: { e: CODE_ARG, r: byName('`require`') },
    dashDash: true,
    plus: false,
  },
  php: {
    flags: 'n',
    valued: {},
    attached: false,
    inline: { r: CODE_ARG, B: CODE_ARG, R: CODE_ARG, F: CODE_ARG, E: CODE_ARG, a: STDIN },
    dashDash: false,
    plus: false,
  },
  lua: {
    flags: 'EW',
    valued: {},
    attached: false,
    inline: { e: CODE_ARG, l: byName('`require`'), i: STDIN },
    dashDash: true,
    plus: false,
  },
};

/** The index in `args` of the script the interpreter runs. Throws NODE_OPTION_REFUSED (node) or
 *  INTERPRETER_OPTION_REFUSED when an option before it is not permitted, or when there is no script. */
export function scriptIndex(family: Family, serverId: string, command: string, args: readonly string[]): number {
  const who: Who = { serverId, command, name: path.basename(command) };
  if (family === 'node') return nodeScriptIndex(who, args);
  const rules = RULES[family];
  const refuse = (opt: string, inline?: Inline): never => {
    const shown = opt.slice(0, 64);
    throw new WardenError(
      'INTERPRETER_OPTION_REFUSED',
      inline
        ? `server '${serverId}' passes ${who.name} the option '${shown}', which ${inline.does}. ${inline.instead(who)}`
        : `server '${serverId}' passes ${who.name} the option '${shown}', which is not one the warden permits before the script: it permits options that load nothing (docs/formats.md lists them). Leave it out, or do what it does in the script.`,
    );
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-') noScript(who, 'INTERPRETER_OPTION_REFUSED', true);
    if (a === '--' && rules.dashDash) {
      if (i + 1 < args.length && args[i + 1] !== '-') return i + 1;
      noScript(who, 'INTERPRETER_OPTION_REFUSED', i + 1 < args.length);
    }
    if (!a.startsWith('-') && !(rules.plus && a.startsWith('+'))) return i;
    if (a.startsWith('--') || a.startsWith('+')) {
      if (rules.words?.test(a)) continue;
      const name = a.split('=')[0] as string;
      refuse(name, Object.hasOwn(rules.inline, name) ? rules.inline[name] : undefined);
    }
    for (let j = 1; j < a.length; j++) {
      const letter = a[j] as string;
      if (Object.hasOwn(rules.inline, letter)) refuse(`-${letter}`, rules.inline[letter]);
      if (rules.flags.includes(letter)) continue;
      const permitted = Object.hasOwn(rules.valued, letter) ? rules.valued[letter] : undefined;
      if (!permitted) refuse(`-${letter}`);
      const attached = j + 1 < a.length;
      if (attached && !rules.attached) refuse(a);
      const value = attached ? a.slice(j + 1) : args[++i];
      if (value === undefined || !permitted?.test(value)) refuse(`-${letter} ${value ?? ''}`.trim());
      break;
    }
  }
  return noScript(who, 'INTERPRETER_OPTION_REFUSED', false);
}

/** Refuses a command line on which the interpreter has no script file (`dash`: it names '-', stdin). */
function noScript(who: Who, code: 'NODE_OPTION_REFUSED' | 'INTERPRETER_OPTION_REFUSED', dash: boolean): never {
  const what = dash ? `names '-' as the script of ${who.name}` : `runs ${who.name} with no script file`;
  throw new WardenError(code, `server '${who.serverId}' ${what}: ${who.name} then reads its program from stdin, which is the MCP stream. Give the script file itself: ${scriptFile(who)}`);
}

/** Whether `a` is a node option the warden permits before a script: one that tunes node and loads nothing. */
function nodeOptionLoadsNothing(a: string): boolean {
  const eq = a.indexOf('=');
  return eq < 0 ? NODE_FLAGS.has(a) : NODE_VALUED.has(a.slice(0, eq));
}

/** Refuses a "#!" line that starts node with an option that is not permitted on a command line: the line is
 *  the script's own, so after enrollment it could name a file (--require=FILE) that runs, unjudged, at every
 *  launch. Throws NODE_OPTION_REFUSED naming the script and the option. */
export function refuseShebangNodeOptions(script: string, args: readonly string[]): void {
  const bad = args.find((a) => !nodeOptionLoadsNothing(a));
  if (bad === undefined) return;
  const eq = bad.indexOf('=');
  const name = (eq < 0 ? bad : bad.slice(0, eq)).slice(0, 64);
  const hint = NODE_VALUED.has(name) ? ` Write it as ${name}=VALUE.` : ' Options that load or run code (--require, --import, --env-file…) are refused: put that code in the script.';
  throw new WardenError('NODE_OPTION_REFUSED', `the "#!" line of ${script} starts node with the option '${name}', which is not one the warden permits (it permits options that tune node and load nothing: docs/formats.md).${hint}`);
}

/** Finds the script a node command line runs: its first argument that is not an option. */
function nodeScriptIndex(who: Who, args: readonly string[]): number {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') {
      if (i + 1 < args.length && args[i + 1] !== '-') return i + 1;
      noScript(who, 'NODE_OPTION_REFUSED', i + 1 < args.length);
    }
    if (!a.startsWith('-')) return i;
    if (!nodeOptionLoadsNothing(a)) {
      const eq = a.indexOf('=');
      const name = eq < 0 ? a : a.slice(0, eq);
      const hint = NODE_VALUED.has(name) ? ` Write it as ${name}=VALUE.` : ' Options that load or run code (--require, --import, --env-file, --openssl-config, --snapshot-blob, --inspect, --eval…) are refused: put that code in the script, and what an --env-file sets in the server\'s "env".';
      throw new WardenError('NODE_OPTION_REFUSED', `server '${who.serverId}' passes node the option '${name.slice(0, 64)}', which is not one the warden permits (it permits options that tune node and load nothing: docs/formats.md).${hint}`);
    }
  }
  return noScript(who, 'NODE_OPTION_REFUSED', false);
}
