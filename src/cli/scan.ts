import { WardenError } from '../error.js';
import { escaped } from '../escape.js';
import { SCAN_RULES_VERSION } from '../scan/rules.js';
import { openHome } from '../store/home.js';
import { loadLocks } from '../store/locks.js';
import { resolveHome } from '../store/paths.js';
import { findingLine, scanLocked } from '../supervise/surface-scan.js';
import { line, printJson } from './output.js';

// `scan <id>` / `scan --all`: the first-trust scan of what tools.lock holds today, offline (no launch). Exit 1
// while a high-severity finding stands, also one accepted at lock time (its acceptance is in the audit log).

export async function scanVerb(homeFlag: string | undefined, id: string | undefined, opts: { all?: boolean; json?: boolean }): Promise<number> {
  if ((id === undefined) === (opts.all !== true)) throw new WardenError('USAGE', 'scan takes a server id or --all (one of them). Usage: mcp-warden scan <id> | --all [--json]');
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const ids = id === undefined ? [...loadLocks(paths).tools.keys()] : [id];
  const results = ids.map((server) => ({ server, ...scanLocked(paths, server) }));
  const high = results.some((r) => r.findings.some((f) => f.severity === 'high'));
  if (opts.json) {
    printJson({ rules: SCAN_RULES_VERSION, servers: results.map((r) => ({ id: r.server, findings: r.findings, more: r.more })) });
  } else {
    for (const r of results) {
      const highs = r.findings.filter((f) => f.severity === 'high').length;
      line(`${escaped(r.server)}: ${r.findings.length === 0 ? 'no findings' : `${r.findings.length + r.more} finding(s), ${highs} high`}`);
      for (const f of r.findings) line(`  ${findingLine(f)}`);
      if (r.more > 0) line(`  ${r.more} more not shown`);
    }
    if (ids.length === 0) line('tools.lock has no servers.');
  }
  return high ? 1 : 0;
}
