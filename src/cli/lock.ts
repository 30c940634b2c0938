import { WardenError } from '../error.js';
import type { LockEntry } from '../surface/lockfile.js';
import { openHome } from '../store/home.js';
import { loadLocks } from '../store/locks.js';
import { resolveHome } from '../store/paths.js';
import { loadServers, serverById } from '../store/servers.js';
import { captureLock, pinTool } from '../supervise/capture-lock.js';
import { escaped, line } from './output.js';
import { printable } from '../escape.js';
import { acceptedFindings } from './accept-findings.js';

// `lock` captures a surface for a server that has none; `pin` accepts the current surface (or one tool of it)
// for a server that has one. Neither is ever automatic: accepting drift is an explicit, reviewable act, and
// the resulting git diff of tools.lock is the review artifact. The capture itself is supervise/capture-lock.ts.

function summary(id: string, entry: LockEntry, conditional: number): string {
  return `server '${id}': ${entry.tools.length} tools${conditional ? ` (${conditional} offered only to clients with capabilities)` : ''}, revision ${entry.protocol.era}, instructions ${entry.instructions === undefined ? 'none' : `${entry.instructions.length} chars`}, surface ${entry.surface_hash}`;
}

export async function lockVerb(homeFlag: string | undefined, id: string, acceptFindings?: string): Promise<number> {
  const accept = acceptedFindings(acceptFindings);
  const paths = resolveHome(homeFlag);
  openHome(paths, true);
  serverById(loadServers(paths), id, paths);
  if (loadLocks(paths).tools.has(id)) {
    throw new WardenError('LOCK_EXISTS', `tools.lock already has an entry for server '${id}'. To accept its current surface, review it with 'mcp-warden diff ${id}', then run: mcp-warden pin ${id}`);
  }
  const entry = await captureLock(paths, id, 'lock', undefined, accept);
  line(escaped(`Locked ${summary(id, entry, loadLocks(paths).warden.get(id)?.conditional.length ?? 0)}`));
  line(`Review ${paths.toolsLock} and commit it if you keep the home in version control.`);
  return 0;
}

export async function pinVerb(homeFlag: string | undefined, id: string, tool: string | undefined, acceptFindings?: string): Promise<number> {
  const accept = acceptedFindings(acceptFindings);
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const server = serverById(loadServers(paths), id, paths);
  const locked = loadLocks(paths).tools.get(id);
  if (!locked) throw new WardenError('LOCK_MISSING', `tools.lock has no entry for server '${id}'. Capture one with: mcp-warden lock ${id}`);
  if (tool === undefined) {
    const entry = await captureLock(paths, id, 'pin', undefined, accept);
    line(escaped(`Pinned ${summary(id, entry, loadLocks(paths).warden.get(id)?.conditional.length ?? 0)} (was ${locked.surface_hash})`));
    return 0;
  }
  const result = await pinTool(paths, id, tool, server, locked, accept);
  line(result === 'pinned' ? `Pinned tool "${printable(tool)}" of server '${escaped(id)}' as it is served now.` : `Removed tool "${printable(tool)}" from the lock of server '${escaped(id)}' (the server no longer lists it).`);
  return 0;
}
