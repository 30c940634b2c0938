import path from 'node:path';
import { refuseIfPreloaded } from '../attest/self.js';
import { upgrade, type UpgradeReport } from '../enroll/npm/upgrade.js';
import { describePublisher } from '../provenance/identity.js';
import { openHome } from '../store/home.js';
import { resolveHome } from '../store/paths.js';
import { publisherLines } from './install.js';
import { confirm, escaped, line, printJson } from './output.js';
import { describeOutcome, jsonOf as surfaceJson } from './verify.js';
import { acceptedFindings } from './accept-findings.js';

export interface UpgradeOptions {
  to?: string;
  yes?: boolean;
  json?: boolean;
  allowPublisherChange?: boolean;
  allowUnsigned?: boolean;
  preview?: boolean;
  acceptFindings?: string;
}

/** What is known before the new version runs: versions, integrities, trees, who built it, the store entry. */
function printHead(r: UpgradeReport, storeDir: string): void {
  const to = r.to;
  if (!to) return;
  line(escaped(`Server '${r.id}': ${r.name} ${r.from.version} -> ${to.version}`));
  line(`Integrity   ${escaped(r.from.integrity)}\n         -> ${escaped(to.integrity)}`);
  line(`Tree        ${escaped(r.from.tree ?? '(unknown)')}\n         -> ${escaped(to.tree)}`);
  for (const l of publisherLines(r.provenance)) line(l);
  const j = r.judgement;
  if (j?.override === 'publisher_changed') line(escaped(`PUBLISHER CHANGED (admitted by --allow-publisher-change): pinned ${r.from.publisher ? describePublisher(r.from.publisher) : '(none)'}; the new one will be pinned.`));
  else if (j?.override === 'provenance_lost') line('PROVENANCE LOST (admitted by --allow-unsigned): the server will no longer require provenance ("preferred").');
  else if (r.from.publisher && r.provenance) line('Same publisher as pinned.');
  else if (!r.from.publisher && j?.identity) line(escaped(`First version with provenance: ${describePublisher(j.identity)} will be pinned.`));
  line(escaped(`Store       ${path.join(storeDir, to.store)}${to.created ? '' : ' (already installed)'}`));
}

/** The environment the out-of-band try gives the new version, by name. */
function envNote(r: UpgradeReport): string {
  const e = r.stagedEnv;
  const names = [...(e?.env ?? []), ...(e?.passEnv ?? [])];
  return names.length > 0 ? `with the server's environment (${names.map(escaped).join(', ')})` : 'with the server\'s environment (it sets no variables of its own)';
}

function jsonOf(r: UpgradeReport): unknown {
  return {
    id: r.id,
    package: r.name,
    current: r.current === true,
    from: r.from,
    to: r.to ?? null,
    provenance: r.provenance ?? null,
    policy: r.judgement ? { policy: r.judgement.policy, identity: r.judgement.identity ?? null, override: r.judgement.override ?? null } : null,
    surface: r.diff ? surfaceJson(r.diff, true) : null,
    staged: r.staged === true,
    switched: r.switched,
  };
}

/** `mcp-warden upgrade <id>`: install the next version beside the old one, show what changes, switch on yes. */
export async function upgradeVerb(homeFlag: string | undefined, id: string, opts: UpgradeOptions): Promise<number> {
  refuseIfPreloaded();
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const interactive = process.stdin.isTTY === true && !opts.yes && !opts.json && !opts.preview;
  let asked = false;
  const report = await upgrade(
    paths,
    { id, ...(opts.to ? { to: opts.to } : {}), allowPublisherChange: opts.allowPublisherChange === true, allowUnsigned: opts.allowUnsigned === true, acceptFindings: acceptedFindings(opts.acceptFindings) },
    {
      say: opts.json ? () => {} : (m) => line(escaped(m)),
      async confirmStage(r) {
        if (!opts.json) printHead(r, paths.storeDir);
        if (opts.yes || opts.preview) return true;
        asked = interactive;
        return interactive && confirm(`Launch ${escaped(r.to?.version ?? '')} out of band, ${envNote(r)}, to compare its surface with the lock? [y/N] `);
      },
      async confirm(r) {
        if (!opts.json) {
          line('Surface against the lock:');
          if (r.diff) describeOutcome(r.diff, true);
        }
        if (opts.preview) return false;
        if (opts.yes) return true;
        return interactive && confirm(escaped(`Switch '${id}' to ${escaped(r.to?.version ?? '')}? [y/N] `));
      },
    },
  );
  if (opts.json) printJson(jsonOf(report));
  if (report.current) {
    if (!opts.json) line(escaped(`Server '${id}' runs ${report.name}@${report.from.version}; the registry has nothing newer${opts.to ? ` than ${opts.to}` : ''}.`));
    return 0;
  }
  if (!report.switched) {
    if (opts.preview && report.staged) {
      if (!opts.json) line(escaped(`Preview: nothing was switched. To switch: mcp-warden upgrade ${id}${opts.to ? ` --to ${opts.to}` : ''} --yes`));
      return 0;
    }
    if (!opts.json) {
      line(
        asked
          ? 'Nothing was changed.'
          : `Nothing was changed, and ${escaped(report.to?.version ?? 'the new version')} was not run. To see its surface diff first: --preview (it runs it out of band, ${envNote(report)}); to switch: --yes; on a terminal you are asked.`,
      );
    }
    return 1;
  }
  if (!opts.json) line(escaped(`Switched '${id}' to ${report.name}@${report.to?.version}: servers.json, the allowlist and both locks were updated. The old store entry is kept until 'mcp-warden store gc'.`));
  return 0;
}
