import type { LaunchPlan } from '../attest/plan.js';
import type { ArtifactRecord } from '../audit/events.js';
import { appendAudit } from '../audit/log.js';
import { killGroupNow } from '../launch/kill.js';
import { sweepOrphans } from '../launch/run-records.js';
import type { HomePaths } from '../store/paths.js';

/** The artifacts of a plan as the audit log records them. */
export function artifactRecords(plan: LaunchPlan): ArtifactRecord[] {
  return plan.artifacts.map((a) => ({ kind: a.kind, path: a.path, sha256: a.sha256, chain: a.chain }));
}

/** Kills process groups left by supervisors that died, and records each in the audit log. */
export async function sweepAndAudit(paths: HomePaths, say: (m: string) => void): Promise<void> {
  for (const g of await sweepOrphans(paths.runDir, (pgid) => killGroupNow(pgid))) {
    say(`killed process group ${g.pgid} of server '${g.serverId}', left running by a warden that died (pids ${g.pids.join(', ')}).`);
    await appendAudit(paths.audit, { event: 'orphan_killed', server: g.serverId, pgid: g.pgid, pids: g.pids, gone: g.gone });
  }
}
