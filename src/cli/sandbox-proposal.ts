import { escaped, printable } from '../escape.js';
import { OWN_CODE, type SandboxProposal } from '../sandbox/propose.js';
import type { NetworkSeen } from '../sandbox/propose-network.js';
import { line } from './output.js';

// How a sandbox proposal is printed: after add, install and import enroll a server, and by `sandbox <id>
// --propose`. What the server wrote is its own behaviour, shown for review; every path goes through the escaper.

/** Lines of each list shown; the file has them all (bounded). */
const SHOWN = 12;

function list<T>(items: readonly T[], show: (t: T) => string): void {
  for (const t of items.slice(0, SHOWN)) line(`    ${show(t)}`);
  if (items.length > SHOWN) line(`    ... and ${items.length - SHOWN} more (in the proposal file)`);
}

/** Prints a proposal; `cmd` makes a command line with the home flag. */
export function printProposal(p: SandboxProposal, file: string, cmd: (rest: string) => string): void {
  if (p.observed.dirs.length === 0) {
    line(`No sandbox could be proposed for server '${printable(p.server)}': its enrollment launches were not observed (${printable(p.observed.unavailable ?? 'no writable place could be overlaid', 400)}). It runs as before, without a sandbox.`);
    return;
  }
  line(`Proposed sandbox for server '${printable(p.server)}', from what its enrollment launches did (the server's own behaviour: review it, nothing is applied):`);
  if (p.observed.unavailable) line(`  (partly observed: ${printable(p.observed.unavailable, 400)})`);
  line(`  watched for writes: ${p.observed.dirs.map((d) => printable(d, 200)).join(', ')}; network use was not observed`);
  const code = new Set(p.code ?? []);
  const named = p.observed.kept.filter((d) => !code.has(d));
  if (named.length) line(`  written for real, as its configuration names them: ${named.map((d) => printable(d, 200)).join(', ')}`);
  if (code.size) line(`  kept as attested, not watched (the server's own code, the warden's package store or install; never granted): ${[...code].map((d) => printable(d, 200)).join(', ')}`);
  if (p.observed.notObserved.length) list(p.observed.notObserved, (n) => `not watched: ${printable(n.dir, 200)} (${printable(n.why, 300)})`);
  if (p.writes.length === 0) line('  it wrote nothing there');
  else {
    line(`  it wrote (redirected: none of it reached the real files${p.truncated ? '; the list is cut' : ''}):`);
    const why = new Map(p.notGranted.map((n) => [n.path, n.why]));
    list(p.writes, (w) => `${w.kind === 'delete' ? 'deleted ' : ''}${printable(w.path, 300)}${why.has(w.path) ? `: ${printable(why.get(w.path) as string, 300)}` : ''}`);
  }
  // Places its configuration names (kept real, not watched) that are not granted: the server will not find them
  // writable, or at all, once confined; say so here, not only in the proposal file.
  const written = new Set(p.writes.map((w) => w.path));
  const refused = p.notGranted.filter((n) => !written.has(n.path) && !n.why.endsWith(OWN_CODE));
  if (refused.length) {
    line('  its configuration names, and the proposal does not grant (a confined server will not write there):');
    list(refused, (n) => `${printable(n.path, 300)}: ${printable(n.why, 300)}`);
  }
  const created = new Set(p.created ?? []);
  line(`  proposed: network none; writes to its data directory, a private /tmp${p.write.map((d) => `, ${printable(d, 200)}${created.has(d) ? ' (not there before: created, mode 0700, when applied)' : ''}`).join('')}`);
  for (const e of p.env) line(`  offered environment: ${printable(e.name)}=${printable(e.value, 300)} (${printable(e.why, 300)})`);
  line(escaped(`  Saved in ${printable(file, 300)}. Apply it with: ${cmd(`sandbox ${p.server} --propose --yes`)}`));
}

/** Prints the names a confined server's proxy refused (sandbox/propose-network.ts): the server's own behaviour,
 *  and the command that grants them, which the operator runs after review. */
export function printNetworkSeen(n: NetworkSeen, id: string, cmd: (rest: string) => string): void {
  if (n.refused.length + n.notGrantable.length === 0) {
    line(`  network: no connection refused by its proxy is in the audit log (only a sandbox with network domains has a proxy that sees them; with none or loopback the kernel refuses them unseen)`);
    return;
  }
  line(`  network its confined sessions asked for and the proxy refused (the server's own behaviour: review each name; --propose --yes grants none)${n.truncated ? ', the list cut' : ''}:`);
  list(n.refused, (r) => `${printable(r.grant, 300)}: ${r.times} time${r.times === 1 ? '' : 's'}, last at ${printable(r.last)}`);
  if (n.notGrantable.length) list(n.notGrantable, (r) => `not grantable: ${printable(r.host, 300)}:${r.port} (${printable(r.why, 300)})`);
  if (n.refused.length) line(escaped(`  Grant what it needs, after review, with: ${cmd(`sandbox ${id} ${n.refused.map((r) => `--allow-domain ${r.grant}`).join(' ')}`)}`));
}
