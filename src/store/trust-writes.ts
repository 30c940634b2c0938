import { renderToolsLock } from '../surface/lockfile.js';
import { renderWardenLock } from '../surface/warden-lock.js';
import { renderAllowlist, type AllowlistFile } from './allowlist.js';
import type { FileWrite } from './journal.js';
import type { Locks } from './locks.js';
import type { HomePaths } from './paths.js';
import { renderServers, type ServersFile } from './servers.js';

/** servers.json, allowlist.json, tools.lock and warden.lock as rendered for one commitFiles (store/update.ts): the
 *  four a change of what may run replaces together (bundle apply, upgrade's switch). */
export function trustFileWrites(paths: HomePaths, t: { servers: ServersFile; allowlist: AllowlistFile; locks: Locks }): FileWrite[] {
  return [
    { file: paths.servers, data: renderServers(t.servers) },
    { file: paths.allowlist, data: renderAllowlist(t.allowlist) },
    { file: paths.toolsLock, data: renderToolsLock(t.locks.tools) },
    { file: paths.wardenLock, data: renderWardenLock(t.locks.warden) },
  ];
}
