import { WardenError } from '../error.js';
import type { ArtifactKind } from '../attest/plan.js';
import { loadAllowlist } from '../store/allowlist.js';
import { parseBundle, renderBundle, type BundleArtifact, type BundleServer, type TrustBundle } from '../store/bundle/format.js';
import { loadBundleState, nextSerial } from '../store/bundle/state.js';
import { loadLocks } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, serverById } from '../store/servers.js';
import type { ToolsLock } from '../surface/lockfile.js';
import type { WardenLock } from '../surface/warden-lock.js';
import { bundlePackages, refuseStoreOverrides, withStorePaths } from './create-packages.js';

// `bundle create`: the reviewed setup of this home (its servers' entries, the allowlist entries of what they
// run, their lock entries) as one trust bundle. Env values stay here: only their names travel.

export interface CreateOptions {
  /** Server ids; all of servers.json when absent. */
  servers?: string[];
  serial?: number;
  /** Paths (the interpreter) each machine's own allowlist decides on, instead of this machine's digest. */
  machineLocal: string[];
  /** More digests to accept for a path, as from other machines: path -> sha256 list. */
  accept: Record<string, string[]>;
  now: Date;
}

export interface Created {
  bundle: TrustBundle;
  text: string;
}

export function createBundle(paths: HomePaths, opts: CreateOptions): Created {
  const serversFile = loadServers(paths);
  const allowlist = loadAllowlist(paths);
  const locks = loadLocks(paths);
  const ids = [...new Set(opts.servers ?? Object.keys(serversFile.servers))].sort();
  if (ids.length === 0) throw new WardenError('SERVER_UNKNOWN', `${paths.servers} names no server, so there is nothing to bundle. Add one with: mcp-warden add <id> -- <command>`);
  refuseStoreOverrides(paths, [...opts.machineLocal, ...Object.keys(opts.accept)]);
  const state = loadBundleState(paths);
  const serial = opts.serial ?? nextSerial(state, opts.now);

  const servers: Record<string, BundleServer> = {};
  const tools: ToolsLock = new Map();
  const warden: WardenLock = new Map();
  const artifacts = new Map<string, BundleArtifact>();
  const used = new Set<string>();
  for (const id of ids) {
    const { env, ...rest } = serverById(serversFile, id, paths);
    servers[id] = { ...rest, envNames: Object.keys(env).sort() };
    const entry = locks.tools.get(id);
    const extra = locks.warden.get(id);
    if (!entry || !extra) throw new WardenError('LOCK_MISSING', `server '${id}' has no entry in ${entry ? paths.wardenLock : paths.toolsLock}, so a bundle could not pin its surface. Capture one with: mcp-warden lock ${id}`);
    if (extra.artifacts.length === 0) throw new WardenError('LOCK_INVALID', `the warden.lock entry of server '${id}' in ${paths.wardenLock} records no artifacts, so a bundle could not say what the server runs. Re-capture it with: mcp-warden lock ${id}`);
    tools.set(id, entry);
    warden.set(id, extra);
    for (const a of extra.artifacts) {
      const key = `${a.kind} ${a.path}`;
      if (artifacts.has(key)) continue;
      const trusted = allowlist.entries.find((e) => e.path === a.path && e.kind === a.kind);
      if (!trusted) throw new WardenError('NOT_ALLOWLISTED', `the ${a.kind} ${a.path} that server '${id}' runs is not in ${paths.allowlist}, so the bundle cannot vouch for it. Check it and run: mcp-warden allowlist add ${a.path}`);
      if (opts.machineLocal.includes(a.path)) {
        artifacts.set(key, { path: a.path, kind: a.kind as ArtifactKind, machineLocal: true });
      } else {
        artifacts.set(key, { path: a.path, kind: a.kind as ArtifactKind, accept: [...new Set([trusted.sha256, ...(opts.accept[a.path] ?? [])])].sort() });
      }
      used.add(a.path);
    }
  }
  for (const p of [...opts.machineLocal, ...Object.keys(opts.accept)]) {
    if (!used.has(p)) throw new WardenError('USAGE', `${p} is not an artifact of the bundled servers (their warden.lock entries name: ${[...used].sort().join(', ')}); --machine-local and --accept take one of those paths.`);
  }
  // Paths inside the store entries of installed servers travel relative to the store (docs/adr/0029).
  const bundle = withStorePaths(paths, { serial, createdAt: opts.now.toISOString(), servers, artifacts: [...artifacts.values()], packages: bundlePackages(paths, servers), tools, warden });
  const text = renderBundle(bundle);
  parseBundle(Buffer.from(text), 'being created'); // what apply would refuse is not written
  return { bundle, text };
}
