import path from 'node:path';
import { WardenError } from '../error.js';

// Registry launchers resolve a package by name when the server starts: what runs is whatever the registry
// serves that day, not what was reviewed. They are refused with the way to install a pinned copy.

const LAUNCHERS = new Set(['npx', 'pnpx', 'bunx', 'uvx', 'pipx']);
const SUBCOMMAND_LAUNCHERS: Record<string, string[]> = {
  npm: ['exec', 'x'],
  pnpm: ['dlx', 'exec'],
  yarn: ['dlx'],
  uv: ['tool'],
  bun: ['x'],
};

function pinnedAdvice(serverId: string, pkg: string | undefined): string {
  const name = pkg?.replace(/@latest$/, '') ?? '<package>';
  return (
    `Install a pinned copy and add that instead, for an npm package: ` +
    `npm install --prefix ~/.local/share/mcp-servers/${serverId} --save-exact ${name}@<version> ` +
    `then: mcp-warden add ${serverId} -- node ~/.local/share/mcp-servers/${serverId}/node_modules/${name}/<its bin script>`
  );
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
  const subs = Object.hasOwn(SUBCOMMAND_LAUNCHERS, base) ? SUBCOMMAND_LAUNCHERS[base] : undefined;
  if (subs && firstPackage && subs.includes(firstPackage)) {
    throw new WardenError(
      'REGISTRY_LAUNCHER',
      `server '${serverId}' is launched with '${base} ${firstPackage}', which resolves a package by name at launch time, so it cannot be attested. ${pinnedAdvice(serverId, args.filter((a) => !a.startsWith('-'))[1])}`,
    );
  }
  const latest = args.find((a) => /@latest$/.test(a));
  if (latest) {
    throw new WardenError(
      'REGISTRY_LAUNCHER',
      `server '${serverId}' names '${latest}', a version chosen at launch time, so it cannot be attested. ${pinnedAdvice(serverId, latest)}`,
    );
  }
}
