import { outdated, type OutdatedRow } from '../enroll/npm/outdated.js';
import { openHome } from '../store/home.js';
import { resolveHome } from '../store/paths.js';
import { escaped, line, printJson, printTable } from './output.js';

const SAYS: Record<OutdatedRow['state'], string> = {
  current: 'up to date',
  'same-publisher': 'newer, provenance from the pinned publisher',
  'publisher-changed': 'newer, BUILT BY ANOTHER PUBLISHER (upgrade refuses it)',
  'no-provenance': 'newer, NO PROVENANCE',
  invalid: 'newer, PROVENANCE DOES NOT VERIFY',
  unreachable: 'registry unreachable',
};

/** `mcp-warden outdated`: exit 0, or 3 when the registry could not be asked about some server. */
export async function outdatedVerb(homeFlag: string | undefined, json: boolean): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const rows = await outdated(paths);
  if (json) printJson({ servers: rows });
  else if (rows.length === 0) line('No server was installed with mcp-warden install.');
  else {
    // A server admitted unsigned has no publisher pinned yet: the newest one's provenance would pin its own.
    const says = (r: OutdatedRow): string => (r.state === 'same-publisher' && !r.pinned ? 'newer, with provenance (upgrade pins its publisher)' : SAYS[r.state]);
    printTable([['SERVER', 'PACKAGE', 'PINNED', 'NEWEST', 'STATE'], ...rows.map((r) => [r.id, r.package, r.version, r.newest ?? '?', says(r)])]);
    for (const r of rows) {
      if (r.state === 'publisher-changed' && r.presented) line(escaped(`${r.id}: newest built by ${r.presented.repository} ${r.presented.workflow}; pinned ${r.pinned?.repository} ${r.pinned?.workflow}`));
      if (r.problem) line(escaped(`${r.id}: ${r.problem.code}: ${r.problem.message}`));
    }
  }
  return rows.some((r) => r.state === 'unreachable') ? 3 : 0;
}
