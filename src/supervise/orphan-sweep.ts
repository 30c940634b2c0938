import type { AuditEvent } from '../audit/events.js';
import { appendAudit } from '../audit/log.js';
import { WardenError } from '../error.js';
import { removeStaleCgroups } from '../launch/cgroup.js';
import { killSessionNow } from '../launch/kill.js';
import { sweepOrphans } from '../launch/run-records.js';
import type { HomePaths } from '../store/paths.js';

/**
 * Kills the sessions (process group and escaped descendants) left by supervisors that died, and records each
 * in the audit log (and tells `observe`: the daemon's metrics). A record another user could have written is reported and audited, never acted on; an
 * insecure run/ is audited and refused (FILE_INSECURE).
 */
export async function sweepAndAudit(paths: HomePaths, say: (m: string) => void, observe: (e: AuditEvent) => void = () => {}): Promise<void> {
  let result: Awaited<ReturnType<typeof sweepOrphans>>;
  try {
    result = await sweepOrphans(paths.runDir, (target) => killSessionNow(target));
  } catch (err) {
    if (err instanceof WardenError && err.code === 'FILE_INSECURE') {
      await appendAudit(paths.audit, { event: 'run_record_refused', file: paths.runDir, reason: err.message });
    }
    throw err;
  }
  for (const r of result.refused) {
    say(`ignored the run record ${r.file}: ${r.reason}, so another user could have written it; nothing was killed on its word. Inspect it, then remove it: rm ${r.file}`);
    await appendAudit(paths.audit, { event: 'run_record_refused', file: r.file, reason: r.reason });
  }
  removeStaleCgroups();
  for (const g of result.swept) {
    const { pids, escapedPids, gone, containment } = g.stop;
    const outside = escapedPids.length > 0 ? `, ${escapedPids.length} of them outside its process group` : '';
    say(`killed process group ${g.pgid} of server '${g.serverId}', left running by a warden that died (pids ${pids.join(', ')}${outside}).`);
    if (!gone) say(`some processes of server '${g.serverId}' survived SIGKILL; check 'ps -o pid,stat,cmd -p ${pids.join(',')}'.`);
    const e: AuditEvent = { event: 'orphan_killed', server: g.serverId, pgid: g.pgid, pids, gone, escaped: escapedPids.length, escapedPids, containment };
    await appendAudit(paths.audit, e);
    observe(e);
  }
}
