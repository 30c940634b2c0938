import { digestFileAsync } from '../attest/digest.js';
import type { Artifact } from '../attest/plan.js';
import { keyString } from '../attest/stat-key.js';
import { WardenError } from '../error.js';
import type { LearnedModule } from '../launch/module-guard.js';
import { loadDigestCache, saveDigestCache } from '../store/digest-cache-file.js';
import type { HomePaths } from '../store/paths.js';
import { serverById, updateServers } from '../store/servers.js';
import { allowlistArtifacts } from './allowlist-artifacts.js';

// Enrollment of the modules a node server loads from outside its package (sibling modules of a bare script, a
// monorepo's linked package, the target of a symlink that leaves the package). The first launch that locks
// its surface runs the module guard in learn mode, through the handshake and the listings; what the server
// loaded outside its attested set is handed here: each file is digested (and must not have changed since the
// server loaded it), allowlisted as a `module` and written to the server's `modules` in servers.json, before
// the next launch, which enforces. See docs/adr/0014-module-guard-preload.md.

/** A module loaded under a directory the observed enrollment launch overlaid (sandbox/observe.ts) showed the
 *  overlay's device: the same file when inode, size, mtime and ctime are the host's. */
function sameThroughOverlay(m: LearnedModule, host: string, overlaid: readonly string[]): boolean {
  const under = overlaid.some((d) => m.path.startsWith(`${d}/`));
  return under && m.key.split(':').slice(1).join(':') === host.split(':').slice(1).join(':');
}

/** Attests and records the outside modules server `id` loaded; returns them. */
export async function recordModules(paths: HomePaths, id: string, seen: LearnedModule[], by: string, say: (m: string) => void, overlaid: readonly string[] = []): Promise<Artifact[]> {
  if (seen.length === 0) return [];
  const cache = loadDigestCache(paths, id);
  const modules: Artifact[] = [];
  for (const m of seen) {
    const d = await digestFileAsync(m.path, cache);
    if (m.key !== keyString(d.key) && !sameThroughOverlay(m, keyString(d.key), overlaid)) {
      throw new WardenError('ARTIFACT_CHANGED', `${m.path}, which server '${id}' loaded during its enrollment launch, changed before the warden digested it; nothing about it was recorded. Find out what writes to it, then enroll the server again.`);
    }
    modules.push({ kind: 'module', path: m.path, sha256: d.sha256, chain: [m.path], key: d.key });
  }
  const problem = saveDigestCache(paths, id, cache);
  if (problem) say(problem);

  await allowlistArtifacts(paths, modules, by, say);
  await updateServers(paths, (config) => {
    serverById(config, id, paths).modules = modules.map((m) => m.path);
  });
  return modules;
}
