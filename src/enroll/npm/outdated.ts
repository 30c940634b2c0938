import semver from 'semver';
import { WardenError } from '../../error.js';
import { samePublisher, type PinnedIdentity, type PublisherIdentity } from '../../provenance/identity.js';
import { verifyNpmAttestations } from '../../provenance/npm-attestations.js';
import type { HomePaths } from '../../store/paths.js';
import { loadServers } from '../../store/servers.js';
import { loadTrustRoot } from '../../store/trust-root-file.js';
import { fetchAttestations, fetchPackument } from './registry.js';

// `mcp-warden outdated`: per installed server, the version it runs, the registry's newest, and whether that
// newest version carries provenance from the pinned publisher. The attestations are verified against the
// sha512 the registry's document names (no tarball is fetched: `upgrade` checks the tarball itself).

export type NewestState = 'current' | 'same-publisher' | 'publisher-changed' | 'no-provenance' | 'invalid' | 'unreachable';

export interface OutdatedRow {
  id: string;
  package: string;
  version: string;
  newest?: string;
  state: NewestState;
  pinned?: PinnedIdentity;
  presented?: PublisherIdentity;
  /** Why the newest could not be judged (invalid provenance, registry failure). */
  problem?: { code: string; message: string };
}

export async function outdated(paths: HomePaths): Promise<OutdatedRow[]> {
  const servers = loadServers(paths);
  const root = loadTrustRoot(paths);
  const rows: OutdatedRow[] = [];
  for (const [id, server] of Object.entries(servers.servers).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const pkg = server.package;
    if (!pkg) continue;
    const row: OutdatedRow = { id, package: pkg.name, version: pkg.version, state: 'current', ...(server.identity ? { pinned: server.identity } : {}) };
    rows.push(row);
    try {
      const packument = await fetchPackument(pkg.name);
      const newest = packument.distTags.latest;
      if (!newest) throw new WardenError('REGISTRY_FAILED', `the registry names no latest version of ${pkg.name}.`);
      row.newest = newest;
      // Nothing newer: latest names the pinned version or one before it (a tag moved back), as upgrade judges it.
      if (newest === pkg.version || (semver.valid(newest) && semver.valid(pkg.version) && semver.lte(newest, pkg.version))) continue;
      const dist = packument.versions.get(newest);
      const sha512 = dist && /^sha512-(.+)$/.exec(dist.integrity);
      const doc = dist ? await fetchAttestations(pkg.name, newest, dist) : undefined;
      if (!dist || !sha512 || doc === undefined) {
        row.state = 'no-provenance';
        continue;
      }
      const verified = verifyNpmAttestations(doc, { name: pkg.name, version: newest, sha512hex: Buffer.from(sha512[1] as string, 'base64').toString('hex') }, root);
      row.presented = verified.identity;
      row.state = !server.identity || samePublisher(server.identity, verified.identity) ? 'same-publisher' : 'publisher-changed';
    } catch (err) {
      if (!(err instanceof WardenError)) throw err;
      row.state = err.code === 'PROVENANCE_MISSING' ? 'no-provenance' : err.code === 'REGISTRY_FAILED' ? 'unreachable' : 'invalid';
      if (row.state !== 'no-provenance') row.problem = { code: err.code, message: err.message };
    }
  }
  return rows;
}
