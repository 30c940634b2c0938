import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LaunchPlan } from '../../attest/plan.js';
import { appendAudit } from '../../audit/log.js';
import type { PublisherRecord } from '../../audit/package-events.js';
import { WardenError } from '../../error.js';
import { escaped } from '../../escape.js';
import { matchesIdentity, pinnedOf, type PublisherIdentity } from '../../provenance/identity.js';
import { loadDigestCache, saveDigestCache } from '../../store/digest-cache-file.js';
import { openHome } from '../../store/home.js';
import { removeEntry } from '../../store/package-store.js';
import type { HomePaths } from '../../store/paths.js';
import { loadServers, SERVER_ID_RE } from '../../store/servers.js';
import { withStoreLock } from '../../store/package-store.js';
import { loadTrustRoot } from '../../store/trust-root-file.js';
import type { TrustRoot } from '../../provenance/trust-root.js';
import type { FindingCode } from '../../scan/rules.js';
import { lockAndBaseline, planEnrollment, trustAndAdd, type EnrollSpec, type Enrollment } from '../enrollment.js';
import { makeCandidate, parseSpec, type Candidate } from './candidate.js';
import { dependencyProvenance, type Dependency } from './dependencies.js';
import { runNpm } from './npm-cli.js';
import { sweepStaleStaging } from './staging.js';
import { putInStore, vetLock, type StoreEntry } from './store-entry.js';

// `mcp-warden install <spec>`: a server admitted because of who built it. The package is resolved to one
// version, its tarball checked against the registry's sha512 and its provenance verified for that very
// tarball; then it is installed into the sealed store, its tree digested and allowlisted with the provenance,
// the server entry written with the publisher pinned, and its surface locked as `add` does. `--dry-run` does
// the verification (and resolves the dependencies in a scratch directory outside the home) and writes nothing.

export interface InstallRequest {
  spec: string;
  id?: string;
  attestationsFile?: string;
  identityPattern?: string;
  allowUnsigned: boolean;
  /** A file of the package to run with node when it has no bin script, or several. */
  entry?: string;
  serverArgs: string[];
  /** The server's environment: values kept in servers.json, names passed through (as `add --env`). */
  env?: Record<string, string>;
  passEnv?: string[];
  /** Codes of high-severity scan findings the operator accepted (--accept-findings). */
  acceptFindings?: readonly FindingCode[];
  dryRun: boolean;
}

export interface InstallHooks {
  say(message: string): void;
  /** Shown everything; may the server be trusted? (true without asking under --yes or without a terminal). */
  confirmTrust(report: InstallReport): Promise<boolean>;
  /** The package has no provenance: may it be admitted anyway? Undefined when nobody can be asked. */
  confirmUnsigned?: (c: Candidate) => Promise<boolean>;
}

export interface InstallReport {
  id: string;
  name: string;
  version: string;
  integrity: string;
  provenance?: PublisherIdentity;
  signedAt?: string;
  attestationsFrom: Candidate['attestationsFrom'];
  /** How an unsigned package was admitted (or would need to be). */
  unsigned?: '--allow-unsigned' | 'prompt';
  /** The script the server runs, relative to the package; undefined when install cannot tell (see `why`). */
  script?: string;
  notEnrollable?: string;
  dependencies: Dependency[];
  store?: StoreEntry;
  plan?: LaunchPlan;
  /** True once the server entry and its allowlist entries were written. */
  added: boolean;
  enrollment?: Enrollment;
}

/** The server id for a package: its name without scope, made a valid id. */
function defaultId(name: string): string {
  const base = (name.split('/').pop() ?? name).replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return base.slice(0, 64) || 'server';
}

/** A path relative to the package, normalized, or undefined when it leads out of the package. */
export function insidePackage(file: string): string | undefined {
  const rel = path.posix.normalize(file.replace(/^\.\//, ''));
  return path.posix.isAbsolute(rel) || rel === '..' || rel.startsWith('../') || rel === '.' ? undefined : rel;
}

/** Which file of the package the server runs: --entry, else its only bin, else the bin named after it. */
function chooseScript(c: Candidate, entry: string | undefined): { script?: string; why?: string } {
  if (entry !== undefined) {
    const rel = insidePackage(entry);
    if (rel === undefined) return { why: `--entry ${entry} must be a path inside the package` };
    return { script: rel };
  }
  const bins = Object.entries(c.bins);
  const base = c.name.split('/').pop();
  const chosen = bins.length === 1 ? bins[0] : bins.find(([k]) => k === base);
  if (chosen) {
    const rel = insidePackage(chosen[1]);
    // npm never links such a bin; run it and the server would be a file the provenance says nothing about.
    if (rel === undefined) return { why: `the bin '${chosen[0]}' of ${c.name}@${c.version} names ${JSON.stringify(chosen[1])}, outside the package, which its provenance does not cover` };
    return { script: rel };
  }
  return {
    why: `${c.name}@${c.version} has ${bins.length === 0 ? 'no bin script' : `several bin scripts (${bins.map(([k]) => k).join(', ')})`}, so install cannot tell which file is the server; name it with --entry <file in the package> (e.g. --entry ${bins[0]?.[1] ?? 'dist/index.js'})`,
  };
}

/** The dependencies npm would install, resolved without fetching their tarballs, in a scratch directory. */
async function resolveDependencies(c: Candidate, root: TrustRoot): Promise<Dependency[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-warden-dry-run-'));
  try {
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ private: true, dependencies: { [c.name]: c.version } }));
    await runNpm(dir, `${c.name}@${c.version}`, ['install', '--package-lock-only', '--save-exact']);
    return await dependencyProvenance(vetLock(dir, c).deps, root);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether `file` (which exists) is, symbolic links resolved, inside `dir`. */
export function realInside(file: string, dir: string): boolean {
  const rel = path.relative(fs.realpathSync(dir), fs.realpathSync(file));
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

export function publisherRecord(id: PublisherIdentity): PublisherRecord {
  return { issuer: id.issuer, repository: id.repository, workflow: id.workflow, ...(id.ref ? { ref: id.ref } : {}), ...(id.commit ? { commit: id.commit } : {}) };
}

/** Refuses a candidate the request does not admit: an identity other than --identity, or no provenance. */
async function admit(c: Candidate, req: Pick<InstallRequest, 'identityPattern' | 'allowUnsigned' | 'dryRun'>, hooks: Pick<InstallHooks, 'confirmUnsigned'>): Promise<'--allow-unsigned' | 'prompt' | undefined> {
  const label = `${c.name}@${c.version}`;
  if (c.provenance) {
    if (req.identityPattern !== undefined && !matchesIdentity(req.identityPattern, c.provenance.identity)) {
      const id = c.provenance.identity;
      const via = id.san.startsWith(`${id.repository}/`) ? '' : ` for the source repository ${escaped(id.repository)}${id.config ? ` (its workflow ${escaped(id.config)})` : ''}`;
      throw new WardenError('IDENTITY_MISMATCH', `${label} was built by ${escaped(id.san)}${via}, which does not match --identity ${req.identityPattern}. Nothing was installed. Check the pattern (it must match the whole signer identity; * matches anything) or the package name.`);
    }
    return undefined;
  }
  if (req.identityPattern !== undefined) {
    throw new WardenError('PROVENANCE_MISSING', `${label} has no provenance, so it cannot match --identity ${req.identityPattern}. Nothing was installed.`);
  }
  if (req.allowUnsigned) return '--allow-unsigned';
  if (!req.dryRun && hooks.confirmUnsigned && (await hooks.confirmUnsigned(c))) return 'prompt';
  throw new WardenError(
    'PROVENANCE_MISSING',
    `${label} has no provenance: nothing says which source and build produced its tarball (${c.attestationsFrom === 'none' ? 'the registry serves no attestations for it' : 'its attestations hold no SLSA provenance'}). Nothing was installed. If you have reviewed it, admit it knowingly with --allow-unsigned; if the registry strips attestations, give them with --attestations FILE.`,
  );
}

export interface Prepared {
  c: Candidate;
  root: TrustRoot;
  unsigned?: '--allow-unsigned' | 'prompt';
  script?: string;
  why?: string;
}

/** Verification and admission, shared by `install` and `import --install`: nothing is written. */
export async function prepareInstall(paths: HomePaths, req: Pick<InstallRequest, 'spec' | 'attestationsFile' | 'identityPattern' | 'allowUnsigned' | 'entry' | 'dryRun'>, hooks: Pick<InstallHooks, 'confirmUnsigned'>): Promise<Prepared> {
  const { name, wanted } = parseSpec(req.spec);
  const root = loadTrustRoot(paths);
  const c = await makeCandidate(name, wanted, root, req.attestationsFile ? { attestationsFile: req.attestationsFile } : {});
  const unsigned = await admit(c, req, hooks);
  const { script, why } = chooseScript(c, req.entry);
  return { c, root, ...(unsigned ? { unsigned } : {}), ...(script ? { script } : {}), ...(why ? { why } : {}) };
}

/** What servers.json and the allowlist record of a server installed into the store. */
export function installedRecord(p: Prepared, store: StoreEntry): NonNullable<EnrollSpec['installed']> {
  const { c } = p;
  return {
    package: { name: c.name, version: c.version, integrity: c.integrity, store: store.name },
    provenance: c.provenance ? 'required' : 'preferred',
    ...(c.provenance ? { identity: pinnedOf(c.provenance.identity) } : {}),
    treeProvenance: { package: `${c.name}@${c.version}`, integrity: c.integrity, ...(c.provenance ? { publisher: publisherRecord(c.provenance.identity), verifiedAt: store.record.verifiedAt } : { unsigned: p.unsigned }) },
  };
}

/** The audit events of an installed server, once servers.json names it. */
export async function auditInstalled(paths: HomePaths, id: string, p: Prepared, store: StoreEntry, by: string): Promise<void> {
  const { c } = p;
  const deps = store.record.dependencies;
  await appendAudit(paths.audit, { event: 'package_installed', server: id, package: c.name, version: c.version, integrity: c.integrity, store: store.name, provenance: c.provenance ? publisherRecord(c.provenance.identity) : 'unsigned', dependencies: deps.length, dependenciesWithProvenance: deps.filter((d) => d.provenance).length, by });
  if (p.unsigned) await appendAudit(paths.audit, { event: 'unsigned_admitted', server: id, package: c.name, version: c.version, integrity: c.integrity, how: p.unsigned, by });
}

export async function install(paths: HomePaths, req: InstallRequest, hooks: InstallHooks): Promise<InstallReport> {
  const { name } = parseSpec(req.spec);
  const id = req.id ?? defaultId(name);
  if (!SERVER_ID_RE.test(id)) throw new WardenError('USAGE', `'${id}' is not a valid server id: use letters, digits, ".", "_" or "-" (at most 64); choose one with --id.`);
  if (!req.dryRun && Object.hasOwn(loadServers(paths).servers, id)) {
    throw new WardenError('SERVER_EXISTS', `server '${id}' is already in ${paths.servers}. Choose another id with --id, or upgrade it with: mcp-warden upgrade ${id}`);
  }
  const prepared = await prepareInstall(paths, req, hooks);
  const { c, root, unsigned, script, why } = prepared;
  const report: InstallReport = {
    id,
    name: c.name,
    version: c.version,
    integrity: c.integrity,
    ...(c.provenance ? { provenance: c.provenance.identity, ...(c.provenance.signedAt ? { signedAt: c.provenance.signedAt } : {}) } : {}),
    attestationsFrom: c.attestationsFrom,
    ...(unsigned ? { unsigned } : {}),
    ...(script ? { script } : {}),
    ...(why ? { notEnrollable: why } : {}),
    dependencies: [],
    added: false,
  };
  if (req.dryRun) {
    report.dependencies = await resolveDependencies(c, root);
    return report;
  }
  if (!script) throw new WardenError('INSTALL_FAILED', `${why}. Nothing was installed.`);

  // Verified: only now is anything written, the home (if it is new) included.
  openHome(paths, true);
  return withStoreLock(paths, async () => {
    await sweepStaleStaging(paths, hooks.say);
    const store = await putInStore(paths, c, root, unsigned);
    report.store = store;
    report.dependencies = store.record.dependencies;
    const file = path.join(store.pkgDir, script);
    if (!fs.existsSync(file) || !realInside(file, store.pkgDir)) {
      if (store.created) removeEntry(store.dir);
      throw new WardenError('INSTALL_FAILED', `${c.name}@${c.version} has no file ${script} inside the package (its ${req.entry ? '--entry' : 'bin'} names it); nothing was installed.`);
    }
    const spec: EnrollSpec = { command: process.execPath, args: [file, ...req.serverArgs], env: req.env ?? {}, passEnv: req.passEnv ?? [], posture: 'enforce', installed: installedRecord(prepared, store) };
    const cache = loadDigestCache(paths, id);
    report.plan = await planEnrollment(paths, id, spec, cache);
    saveDigestCache(paths, id, cache);
    if (!(await hooks.confirmTrust(report))) {
      if (store.created) removeEntry(store.dir);
      return report;
    }
    const by = `install ${id}`;
    await trustAndAdd(paths, id, spec, report.plan, by, hooks.say);
    report.added = true;
    await auditInstalled(paths, id, prepared, store, by);
    return report;
  }).then(async (r) => {
    // The surface is locked outside the store lock: the entry is named by servers.json now, gc keeps it.
    if (r.added) r.enrollment = await lockAndBaseline(paths, id, hooks.say, `install ${id}`, req.acceptFindings, undefined, undefined, 'operator');
    return r;
  });
}
