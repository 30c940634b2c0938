import path from 'node:path';
import { WardenError } from '../error.js';

// Registry launchers resolve a package by name when the server starts: what runs is whatever the registry
// serves that day, not what was reviewed. They are refused with the way to install a pinned copy.

const LAUNCHERS = new Set(['npx', 'pnpx', 'bunx', 'uvx', 'pipx', 'dx', 'dnx']);

/** A launcher whose subcommand fetches: the subcommands that do, and the global options that may come before
 *  the subcommand, those that take their value as the next word and those that take none. An option not on
 *  either list (its next word may be its value, or the subcommand) fails closed: the line is refused. */
interface SubcommandLauncher {
  subs: string[];
  valued: string[];
  flags: string[];
}

const SUBCOMMAND_LAUNCHERS: Record<string, SubcommandLauncher> = {
  npm: {
    subs: ['exec', 'x'],
    valued: ['--prefix', '-C', '--workspace', '-w', '--userconfig', '--globalconfig', '--cache', '--registry', '--loglevel', '--tag', '--omit', '--include'],
    flags: ['-g', '--global', '-s', '--silent', '-q', '--quiet', '-d', '-dd', '-ddd', '--verbose', '-y', '--yes', '--workspaces', '-ws', '--include-workspace-root', '--offline', '--prefer-offline', '--prefer-online', '--no-color', '--color'],
  },
  pnpm: {
    subs: ['dlx', 'exec'],
    valued: ['--dir', '-C', '--filter', '-F', '--reporter', '--loglevel', '--config-dir', '--store-dir'],
    flags: ['-r', '--recursive', '-w', '--workspace-root', '-s', '--silent', '--color', '--no-color', '--aggregate-output', '--stream', '--offline', '--prefer-offline'],
  },
  yarn: { subs: ['dlx'], valued: ['--cwd'], flags: ['-s', '--silent', '--verbose', '--offline', '--no-progress'] },
  uv: {
    subs: ['tool'],
    valued: ['--directory', '--project', '--cache-dir', '--config-file', '--color', '--python', '-p', '--index', '--default-index', '--index-url', '--extra-index-url'],
    flags: ['-q', '--quiet', '-v', '--verbose', '--offline', '--no-cache', '-n', '--native-tls', '--no-progress', '--no-config', '--frozen', '--locked', '--no-sync'],
  },
  bun: { subs: ['x'], valued: ['--cwd', '-c', '--config'], flags: ['--bun', '--silent', '--smol', '-b'] },
  deno: { subs: ['x'], valued: ['--config', '-c'], flags: ['-q', '--quiet', '--unstable'] },
};

/** Options of `uv run` that install packages from an index at launch (`--with`, a script's inline metadata). */
const UV_RUN_FETCHES = /^(--with(-requirements|-editable)?|--script|-s)(=|$)/;
/** A specifier deno resolves from a registry or the network at launch, as an argument or an option's value. */
const REMOTE_SPECIFIER = /^(npm|jsr|https?):/i;
/** Options of `deno run`/`serve` before the script: those whose value is the next word (any of them may name a
 *  remote specifier: --preload npm:x, --import-map https:…), and those that take none or only `=VALUE`. */
const DENO_VALUED = ['--config', '-c', '--import-map', '--lock', '--cert', '--location', '--seed', '--ext', '--preload', '--require'];
const DENO_FLAGS = /^(-A|-q|-r|-W|--allow-all|--quiet|--reload|--watch|--check|--cached-only|--frozen|--node-modules-dir|--inspect(-brk|-wait)?|--env-file|--env|--(allow|deny)-[a-z-]+|--unstable(-[a-z-]+)?|--no-[a-z-]+)$/;

const remote = (a: string): boolean => REMOTE_SPECIFIER.test(a) || (a.startsWith('-') && REMOTE_SPECIFIER.test(a.slice(a.indexOf('=') + 1)));

/** Whether `deno SUB args…` (the args after the subcommand) runs a script, or preloads a module, resolved from a
 *  registry or the network. Throws REGISTRY_LAUNCHER for an option it does not know before the script. */
function denoFetches(serverId: string, sub: string, rest: string[]): boolean {
  if (remote(sub)) return true; // `deno npm:pkg`: deno 2 runs a script named without `run`
  if (sub !== 'run' && sub !== 'serve') return false;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] as string;
    if (remote(a)) return true;
    if (!a.startsWith('-')) return false; // the script, local: what follows is its own arguments
    if (a.includes('=')) continue;
    if (DENO_VALUED.includes(a)) {
      if (remote(rest[++i] ?? '')) return true;
      continue;
    }
    if (!DENO_FLAGS.test(a)) {
      throw new WardenError(
        'REGISTRY_LAUNCHER',
        `server '${serverId}' is launched with 'deno ${sub}' and the option '${a.slice(0, 64)}' before its script, which the warden does not know: it cannot tell whether the next word is the option's value or the script, which may be fetched at launch. Write the option as ${a.slice(0, 64)}=VALUE.`,
      );
    }
  }
  return false;
}

function pinnedAdvice(serverId: string, pkg: string | undefined): string {
  const name = pkg?.replace(/@latest$/, '') ?? '<package>';
  return (
    `Install a pinned copy and add that instead, for an npm package: ` +
    `npm install --prefix ~/.local/share/mcp-servers/${serverId} --save-exact ${name}@<version> ` +
    `then: mcp-warden add ${serverId} -- node ~/.local/share/mcp-servers/${serverId}/node_modules/${name}/<its bin script>`
  );
}

/** The index of the launcher's subcommand in `args` (args.length when there is none), skipping its global
 *  options and their values. Throws REGISTRY_LAUNCHER when an option it does not know comes first. */
function subcommandIndex(serverId: string, base: string, launcher: SubcommandLauncher, args: string[]): number {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') return args.length;
    if (!a.startsWith('-')) return i;
    const name = a.split('=')[0] as string;
    if (launcher.valued.includes(name)) {
      if (!a.includes('=')) i++;
      continue;
    }
    if (launcher.flags.includes(a) || (a.startsWith('--') && a.includes('='))) continue;
    throw new WardenError(
      'REGISTRY_LAUNCHER',
      `server '${serverId}' is launched with ${base} and the option '${name.slice(0, 64)}' before its subcommand, which the warden does not know: it cannot tell whether the next word is the option's value or a subcommand that fetches a package at launch. Write the option as ${name.slice(0, 64)}=VALUE, or run the installed server directly. ${pinnedAdvice(serverId, undefined)}`,
    );
  }
  return args.length;
}

/** Refuses a command line that fetches its server from a registry at launch time. */
export function refuseRegistryLaunchers(serverId: string, command: string, args: string[]): void {
  const base = path.basename(command);
  const firstPackage = args.find((a) => !a.startsWith('-'));
  if (LAUNCHERS.has(base)) {
    throw new WardenError(
      'REGISTRY_LAUNCHER',
      `server '${serverId}' is launched with ${base}, which downloads and runs whatever version the registry serves at launch time, so it cannot be attested. ${pinnedAdvice(serverId, firstPackage)}`,
    );
  }
  const launcher = Object.hasOwn(SUBCOMMAND_LAUNCHERS, base) ? SUBCOMMAND_LAUNCHERS[base] : undefined;
  if (launcher) {
    const at = subcommandIndex(serverId, base, launcher, args);
    const sub = args[at];
    const rest = args.slice(at + 1);
    const fetches =
      (sub !== undefined && launcher.subs.includes(sub)) ||
      (base === 'uv' && sub === 'run' && rest.some((a) => UV_RUN_FETCHES.test(a))) ||
      (base === 'deno' && sub !== undefined && denoFetches(serverId, sub, rest));
    if (fetches) {
      throw new WardenError(
        'REGISTRY_LAUNCHER',
        `server '${serverId}' is launched with '${base} ${(sub ?? '').slice(0, 64)}', which resolves a package by name or address at launch time, so it cannot be attested. ${pinnedAdvice(serverId, rest.find((a) => !a.startsWith('-')))}`,
      );
    }
  }
  const latest = args.find((a) => /@latest$/.test(a));
  if (latest) {
    throw new WardenError(
      'REGISTRY_LAUNCHER',
      `server '${serverId}' names '${latest}', a version chosen at launch time, so it cannot be attested. ${pinnedAdvice(serverId, latest)}`,
    );
  }
}
