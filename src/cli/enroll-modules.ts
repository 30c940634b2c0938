import { digestFileAsync } from '../attest/digest.js';
import type { Artifact } from '../attest/plan.js';
import { keyString } from '../attest/stat-key.js';
import { WardenError } from '../error.js';
import { DEFAULT_CHANNEL_LIMITS } from '../proxy/channel.js';
import { DEFAULT_OFFERED, FULL_CAPABILITIES, fetchOnce } from '../proxy/fetch.js';
import { loadDigestCache, saveDigestCache } from '../store/digest-cache-file.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, saveServers, serverById } from '../store/servers.js';
import { DEFAULT_CAPS } from '../surface/admit.js';
import { allowlistArtifacts } from './enroll.js';
import { attestAndLaunch, stopLaunched } from './launch.js';

// Enrollment of the modules a node server loads from outside its package (sibling modules of a bare script, a
// monorepo's linked package, the target of a symlink that leaves the package): one launch with the module
// guard in learn mode, through the handshake and the listings, records what the server loaded outside its
// attested set; each file is digested (and must not have changed since the server loaded it), allowlisted as
// a `module` and written to the server's `modules` in servers.json. See docs/adr/0013-module-guard-preload.md.

/** Learns, attests and records the outside modules of server `id`; returns them (none for a non-node server). */
export async function enrollModules(paths: HomePaths, id: string, by: string, say: (m: string) => void): Promise<Artifact[]> {
  const launched = await attestAndLaunch(paths, id, say, undefined, { learnModules: true });
  let noise = 0;
  let failure: unknown;
  try {
    await fetchOnce({ serverIn: launched.child.stdin, serverOut: launched.child.stdout }, DEFAULT_OFFERED, FULL_CAPABILITIES, DEFAULT_CAPS, { ...DEFAULT_CHANNEL_LIMITS, requestTimeoutMs: 20_000 }, () => noise++);
  } catch (err) {
    failure = err; // the lock that follows reports why the surface could not be fetched
  }
  await stopLaunched(paths, id, launched, failure ? 'protocol_error' : 'client_eof', { nonJsonLines: noise, oversizeLines: 0, refusedClientLines: 0 }, { grace: !failure, say });
  const seen = launched.guard?.learned() ?? [];
  launched.guard?.close();
  if (seen.length === 0) return [];

  const cache = loadDigestCache(paths);
  const modules: Artifact[] = [];
  for (const m of seen) {
    const d = await digestFileAsync(m.path, cache);
    if (m.key !== keyString(d.key)) {
      throw new WardenError('ARTIFACT_CHANGED', `${m.path}, which server '${id}' loaded during its enrollment launch, changed before the warden digested it; nothing about it was recorded. Find out what writes to it, then enroll the server again.`);
    }
    modules.push({ kind: 'module', path: m.path, sha256: d.sha256, chain: [m.path], key: d.key });
  }
  const problem = saveDigestCache(paths, cache);
  if (problem) say(problem);

  await allowlistArtifacts(paths, modules, by, say);
  const config = loadServers(paths);
  serverById(config, id, paths).modules = modules.map((m) => m.path);
  saveServers(paths, config);
  return modules;
}
