import { refuseIfPreloaded } from '../attest/self.js';
import { install, type InstallReport } from '../enroll/npm/install.js';
import type { PublisherIdentity } from '../provenance/identity.js';
import { loadAllowlist } from '../store/allowlist.js';
import { openHome } from '../store/home.js';
import { loadLocks } from '../store/locks.js';
import { resolveHome } from '../store/paths.js';
import type { LockEntry } from '../surface/lockfile.js';
import { confirm, describeArtifact, escaped, line, lockedTools, printJson } from './output.js';
import { offerStrictMode } from './rules-offer.js';
import { command } from './rules-print.js';
import { printProposal } from './sandbox-proposal.js';
import { envOptions } from './env-options.js';
import { acceptedFindings } from './accept-findings.js';
import { refuseSecretArguments } from '../enroll/secret-arguments.js';

export interface InstallOptions {
  id?: string;
  attestations?: string;
  identity?: string;
  allowUnsigned?: boolean;
  entry?: string;
  env?: string[];
  passEnv?: string[];
  dryRun?: boolean;
  acceptFindings?: string;
  yes?: boolean;
  json?: boolean;
}

/** Who built a package, as install and upgrade print it. */
export function publisherLines(p: PublisherIdentity | undefined, signedAt?: string): string[] {
  if (!p) return ['Provenance  none: nothing says which source and build produced this tarball'];
  return [
    `Provenance  verified${signedAt ? `, signed ${signedAt}` : ''}`,
    `  source    ${escaped(p.repository)}`,
    `  workflow  ${escaped(p.workflow)}`,
    ...(p.ref ? [`  ref       ${escaped(p.ref)}`] : []),
    ...(p.commit ? [`  commit    ${escaped(p.commit)}`] : []),
    `  issuer    ${escaped(p.issuer)}`,
    ...(p.run ? [`  run       ${escaped(p.run)}`] : []),
  ];
}

export function dependencyLine(deps: InstallReport['dependencies']): string {
  const verified = deps.filter((d) => d.provenance).length;
  return `Dependencies  ${verified} of ${deps.length} packages with verified provenance`;
}

function printReport(r: InstallReport, dryRun: boolean): void {
  line(escaped(`Package     ${r.name}@${r.version}`));
  line(escaped(`Integrity   ${r.integrity}`));
  for (const l of publisherLines(r.provenance, r.signedAt)) line(l);
  if (r.attestationsFrom === 'file') line('            (attestations read from --attestations)');
  if (r.unsigned) line(`Admitted unsigned (${r.unsigned}); the server's policy will be "preferred": the first later version with provenance pins its publisher.`);
  line(dependencyLine(r.dependencies));
  if (r.script) line(escaped(`Runs        node ${r.script}${r.id ? ` (server '${r.id}')` : ''}`));
  if (r.notEnrollable) line(escaped(`Cannot enroll as it stands: ${r.notEnrollable}.`));
  if (r.store) line(escaped(`Store       ${r.store.dir}${r.store.created ? '' : ' (already installed, unchanged)'}`));
  if (r.plan) {
    line('Artifacts that will be allowlisted:');
    for (const a of r.plan.artifacts) line(describeArtifact(a));
  }
  if (dryRun) line('Dry run: nothing was written.');
}

function jsonOf(r: InstallReport): unknown {
  return {
    id: r.id,
    package: r.name,
    version: r.version,
    integrity: r.integrity,
    provenance: r.provenance ?? null,
    signedAt: r.signedAt ?? null,
    attestationsFrom: r.attestationsFrom,
    unsigned: r.unsigned ?? null,
    script: r.script ?? null,
    notEnrollable: r.notEnrollable ?? null,
    dependencies: { total: r.dependencies.length, withProvenance: r.dependencies.filter((d) => d.provenance).length, packages: r.dependencies },
    store: r.store ? { dir: r.store.dir, created: r.store.created } : null,
    artifacts: r.plan?.artifacts.map((a) => ({ kind: a.kind, path: a.path, sha256: a.sha256 })) ?? [],
    added: r.added,
    locked: r.enrollment?.lock ? { tools: r.enrollment.lock.tools.length, surface: r.enrollment.lock.surface_hash } : null,
    lockError: r.enrollment?.lockError ? { code: r.enrollment.lockError.code, message: r.enrollment.lockError.message } : null,
  };
}

/** `mcp-warden install <spec>`: verify, install into the sealed store, enroll. */
export async function installVerb(homeFlag: string | undefined, spec: string, serverArgs: string[], opts: InstallOptions): Promise<number> {
  if (!opts.dryRun) refuseIfPreloaded();
  // Before anything is fetched: the arguments would be recorded in tools.lock, the environment is not.
  refuseSecretArguments(opts.id ?? spec, serverArgs);
  const { env, passEnv } = envOptions(opts.env ?? [], opts.passEnv ?? []);
  const acceptFindings = acceptedFindings(opts.acceptFindings);
  const paths = resolveHome(homeFlag);
  // Checked, not created: a refusal leaves the home as it was. install creates it once verification passed.
  openHome(paths, false);
  if (!opts.dryRun) {
    loadAllowlist(paths);
    loadLocks(paths);
  }
  const interactive = process.stdin.isTTY === true && !opts.yes && !opts.json;
  const say = opts.json ? () => {} : (m: string): void => line(escaped(m));
  const report = await install(
    paths,
    { spec, ...(opts.id ? { id: opts.id } : {}), ...(opts.attestations ? { attestationsFile: opts.attestations } : {}), ...(opts.identity !== undefined ? { identityPattern: opts.identity } : {}), allowUnsigned: opts.allowUnsigned === true, ...(opts.entry ? { entry: opts.entry } : {}), serverArgs, env, passEnv, acceptFindings, dryRun: opts.dryRun === true },
    {
      say,
      async confirmTrust(r) {
        if (!opts.json) printReport(r, false);
        return !interactive || confirm('Trust it and add the server? [y/N] ');
      },
      // Asked only on a terminal, and never implied by --yes: admitting an unsigned package is its own decision.
      ...(process.stdin.isTTY === true && !opts.json
        ? {
            confirmUnsigned: (c) => {
              line(escaped(`${c.name}@${c.version} has NO provenance: nothing says which source and build produced its tarball, and a later version cannot be checked against a publisher until one has it.`));
              return confirm('Admit it unsigned anyway? [y/N] ');
            },
          }
        : {}),
    },
  );
  if (opts.json) {
    printJson(jsonOf(report));
  } else if (opts.dryRun) {
    printReport(report, true);
  } else if (!report.added) {
    line('Nothing was trusted; the store entry made for it was removed.');
    return 1;
  } else {
    line(escaped(`Added server '${report.id}' to ${paths.servers}, pinned to ${report.provenance ? `${escaped(report.provenance.repository)} ${escaped(report.provenance.workflow)}` : 'no publisher (unsigned)'}.`));
    if (report.enrollment?.lockError) {
      line(escaped(`Its surface could not be locked: ${report.enrollment.lockError.message}`));
      line(escaped(`Fix that, then run: mcp-warden${homeFlag ? ` --home ${paths.home}` : ''} lock ${report.id}`));
      return report.enrollment.lockError.exitCode;
    }
    const locked = report.enrollment?.lock as LockEntry | undefined;
    if (locked) line(escaped(`Locked ${lockedTools(locked.tools.length, loadLocks(paths).warden.get(report.id)?.conditional.length ?? 0)} (surface ${locked.surface_hash}); ${report.enrollment?.baselines ?? 0} canary baseline(s) recorded.`));
    line(escaped(`Point your client at: mcp-warden${homeFlag ? ` --home ${paths.home}` : ''} run ${report.id}`));
    if (locked && report.id) await offerStrictMode(paths, homeFlag, report.id, interactive);
    const proposed = report.enrollment?.proposal;
    if (proposed) printProposal(proposed.proposal, proposed.file, (rest) => command(homeFlag, paths.home, rest));
  }
  if (opts.json && report.enrollment?.lockError) return report.enrollment.lockError.exitCode;
  if (!opts.dryRun && !report.added) return 1;
  return 0;
}
