import os from 'node:os';
import path from 'node:path';

/** The name of the commit journal in a home (store/journal.ts). */
export const JOURNAL_NAME = 'commit.journal';

/** Where the warden keeps its files, and the name of each. */
export interface HomePaths {
  home: string;
  servers: string;
  allowlist: string;
  toolsLock: string;
  wardenLock: string;
  audit: string;
  cacheDir: string;
  runDir: string;
  /** What `import` changed in client configuration files, for `unwrap`. */
  imports: string;
  /** Copies of client configuration files taken before `import` or `unwrap` wrote them. */
  backupsDir: string;
  /** npm packages `import --install` installed at a pinned version (before the sealed store; read only). */
  packagesDir: string;
  /** The sealed package store: one read-only directory per verified package version (docs/formats.md). */
  storeDir: string;
  /** The sigstore trust root `trust-root update` stored; absent: the one shipped with mcp-warden. */
  trustRoot: string;
  /** The serials of the trust bundles this home created and applied last (docs/formats.md "bundle-state.json"). */
  bundleState: string;
  /** A change of several trust files in progress or interrupted (store/journal.ts); absent otherwise. */
  commitJournal: string;
  /** Where a running daemon hears the events of `run` sessions (owner-only). */
  eventSocket: string;
  /** Where a running daemon answers /status and /metrics for `mcp-warden status` (owner-only). */
  statusSocket: string;
  /** A staging home only (enroll/npm/staging.ts): the real home it lies in and stands in for, which the sandbox
   *  of a launch there hides whole (its servers.json, audit log, store, the daemon's sockets). */
  realHome?: string;
}

/** The home: --home, else MCP_WARDEN_HOME, else $XDG_CONFIG_HOME/mcp-warden, else ~/.config/mcp-warden. */
export function resolveHome(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): HomePaths {
  const xdg = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : undefined;
  const chosen =
    flag ?? env.MCP_WARDEN_HOME ?? path.join(xdg ?? path.join(os.homedir(), '.config'), 'mcp-warden');
  const home = path.resolve(chosen);
  return {
    home,
    servers: path.join(home, 'servers.json'),
    allowlist: path.join(home, 'allowlist.json'),
    toolsLock: path.join(home, 'tools.lock'),
    wardenLock: path.join(home, 'warden.lock'),
    audit: path.join(home, 'audit.log'),
    cacheDir: path.join(home, 'cache'),
    runDir: path.join(home, 'run'),
    imports: path.join(home, 'imports.json'),
    backupsDir: path.join(home, 'backups'),
    packagesDir: path.join(home, 'packages'),
    storeDir: path.join(home, 'store'),
    trustRoot: path.join(home, 'trust-root.json'),
    bundleState: path.join(home, 'bundle-state.json'),
    commitJournal: path.join(home, JOURNAL_NAME),
    eventSocket: path.join(home, 'daemon.sock'),
    statusSocket: path.join(home, 'status.sock'),
  };
}
