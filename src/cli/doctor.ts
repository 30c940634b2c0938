import { escaped } from '../escape.js';
import { doctorReport, type DoctorReport } from '../sandbox/doctor.js';
import type { Probe } from '../sandbox/doctor-probe.js';
import { resolveHome } from '../store/paths.js';
import { line, printJson } from './output.js';

// `mcp-warden doctor [--json]`: what each sandbox level confines on this host (sandbox/doctor.ts does the
// work). Exit 0 when every level can be applied, 1 otherwise (a failed check). Parses and prints only.

const probe = (p: Probe | null): string => (p === null ? 'not run' : p.ok ? 'ok' : `FAILED: ${p.detail ?? 'no reason given'}`);

function print(r: DoctorReport): void {
  line(escaped(`Trusted path (${r.pathFrom === 'default' ? 'the default, no servers.json yet' : 'servers.json'}): ${r.trustedPath}`));
  line(escaped(`Engine:      ${'file' in r.engine ? `${r.engine.file} (${r.engine.version ?? 'version unknown'})` : `${r.engine.code}: ${r.engine.message}`}`));
  line(escaped(`nsenter:     ${'file' in r.nsenter ? r.nsenter.file : `${r.nsenter.code}: ${r.nsenter.message}`}`));
  const o = r.observation;
  line(escaped(`Enrollment observation: unshare ${o.unshare ?? 'missing'}, sh ${o.sh ?? 'missing'}, mount ${o.mount ?? 'missing'}, umount ${o.umount ?? 'missing'}; overlayfs ${o.overlayfs ? 'available' : 'not in /proc/filesystems'}`));
  const u = r.userNamespaces;
  line(`Running as:  uid ${r.uid}${r.uid === 0 ? ' (root)' : ''}; user namespaces: max_user_namespaces ${u.max ?? 'unknown'}${u.unprivilegedClone !== null ? `, unprivileged_userns_clone ${u.unprivilegedClone}` : ''}${u.apparmorRestricted !== null ? `, apparmor_restrict_unprivileged_userns ${u.apparmorRestricted}` : ''}`);
  line(`Landlock:    ${r.landlock === null ? 'unknown (/sys/kernel/security/lsm not readable)' : r.landlock ? 'enabled' : 'not enabled'} (information only: the sandbox does not use it)`);
  line(escaped(`Probes:      network namespace ${probe(r.probes.network)}; file view ${probe(r.probes.files)}; domains (nsenter) ${probe(r.probes.domains)}${r.probes.unprivileged ? `; as uid 65534 (no root) ${probe(r.probes.unprivileged)}` : ''}`));
  const d = r.decoys;
  line(escaped(d.placed ? `Decoys:      placed in every confined session (a read of one is reported): ${d.paths.join(', ')}` : `Decoys:      NOT placed (${r.writes.guard ? 'no read of a secret path is seen outside the server' : 'reads of secret paths are not reported'}): ${d.why ?? ''}`));
  if (!d.placed && r.writes.guard) line("             node servers: their module guard reports their reads of those paths instead of decoys (the server's word)");
  const w = r.writes;
  line(escaped(w.observed ? `Writes:      denied writes of every confined session are observed (bpftrace ${w.bpftrace ?? ''})` : `Writes:      denied writes are NOT observed (the sandbox still refuses them): ${w.why ?? ''}`));
  if (w.guard) line("             node servers: their module guard reports the writes their own fs calls were refused (the server's word: not native code, child processes or other languages)");
  line();
  for (const l of r.levels) {
    line(escaped(`${l.level}: ${l.ok ? 'ok' : `CANNOT BE APPLIED (${l.code ?? ''})`}`));
    line(escaped(`  confines:     ${l.confines}`));
    line(escaped(`  does not:     ${l.doesNot}`));
    if (!l.ok && l.fix) line(escaped(`  fix:          ${l.fix}`));
  }
  line();
  line(r.ok ? 'Every level can be applied on this host.' : 'Some levels cannot be applied on this host: a server declaring one is refused at launch (never run unconfined).');
}

export async function doctorVerb(homeFlag: string | undefined, json: boolean): Promise<number> {
  const report = await doctorReport(resolveHome(homeFlag));
  if (json) printJson(report);
  else print(report);
  return report.ok ? 0 : 1;
}
