import fs from 'node:fs';
import path from 'node:path';
import type { LaunchPlan } from '../../attest/plan.js';
import { appendAudit } from '../../audit/log.js';
import { WardenError } from '../../error.js';
import type { PinnedIdentity, PublisherIdentity } from '../../provenance/identity.js';
import { judgeUpgrade, type Overrides, type UpgradeJudgement } from '../../provenance/policy.js';
import type { AllowlistEntry } from '../../store/allowlist.js';
import { loadDigestCache, saveDigestCache } from '../../store/digest-cache-file.js';
import { entryDir, packageDirOf, readInstallRecord, removeEntry } from '../../store/package-store.js';
import type { HomePaths } from '../../store/paths.js';
import { loadServers, serverById, type ServerConfig } from '../../store/servers.js';
import { withStoreLock } from '../../store/package-store.js';
import { loadTrustRoot } from '../../store/trust-root-file.js';
import type { SurfaceCheck } from '../../supervise/surface-check.js';
import { planEnrollment } from '../enrollment.js';
import { makeCandidate, type Candidate } from './candidate.js';
import { insidePackage, publisherRecord, realInside } from './install.js';
import { fetchPackument, resolveVersion } from './registry.js';
import { discardStaging, stageUpgrade, sweepStaleStaging } from './staging.js';
import type { FindingCode } from '../../scan/rules.js';
import { putInStore, type StoreEntry } from './store-entry.js';
import { switchServer } from './upgrade-switch.js';
import { binsOf, type TarballManifest } from './tarball.js';
import semver from 'semver';

// `mcp-warden upgrade <id>`: the next version of an installed server, admitted only as the same publisher's
// build (provenance/policy.ts) and only after the operator has seen what changes: the version, the integrity,
// who built it, the package tree's digest and the surface diff against the lock. The new version is installed
// beside the old one, and, on a first yes, tried out of band in a staging home (staging.ts): that runs it with
// the server's environment, so it is never done unasked. On a second yes the real home is switched in one step
// (upgrade-switch.ts). A refusal or a "no" leaves the home and the store as they were.

export interface UpgradeRequest extends Overrides {
  id: string;
  to?: string;
  /** Codes of high-severity scan findings of the new version's surface the operator accepted. */
  acceptFindings?: readonly FindingCode[];
}

export interface UpgradeHooks {
  say(message: string): void;
  /** Shown the version, integrity, tree and publisher: may the new version be launched out of band (with the
   *  server's environment) to compare its surface? */
  confirmStage(report: UpgradeReport): Promise<boolean>;
  /** Shown the surface diff too: may the server be switched? */
  confirm(report: UpgradeReport): Promise<boolean>;
}

export interface UpgradeReport {
  id: string;
  name: string;
  from: { version: string; integrity: string; store: string; tree?: string; publisher?: PinnedIdentity };
  to?: { version: string; integrity: string; store: string; tree: string; created: boolean };
  provenance?: PublisherIdentity;
  judgement?: UpgradeJudgement;
  /** Nothing newer than the installed version (or the version asked for is the installed one). */
  current?: boolean;
  diff?: SurfaceCheck;
  plan?: LaunchPlan;
  /** The environment the out-of-band try gives the new version (names only). */
  stagedEnv?: { env: string[]; passEnv: string[] };
  /** True once the new version was launched out of band. */
  staged?: boolean;
  switched: boolean;
}

/** The script of the new version: the same bin name as before when it still has one, else the same path. */
function nextScript(server: ServerConfig, oldPkgDir: string, newPkgDir: string, c: Candidate): string {
  const oldScript = server.args[0] ?? '';
  const rel = path.relative(oldPkgDir, oldScript);
  let oldBins: Record<string, string> = {};
  try {
    oldBins = binsOf(JSON.parse(fs.readFileSync(path.join(oldPkgDir, 'package.json'), 'utf8')) as TarballManifest, c.name);
  } catch {
    // the old package.json is unreadable: fall back to the same relative path
  }
  const binName = Object.entries(oldBins).find(([, p]) => path.posix.normalize(p.replace(/^\.\//, '')) === rel)?.[0];
  const next = binName && c.bins[binName] ? insidePackage(c.bins[binName]) : insidePackage(rel);
  const file = path.join(newPkgDir, next ?? '..');
  if (next === undefined || rel.startsWith('..') || !fs.existsSync(file) || !realInside(file, newPkgDir)) {
    throw new WardenError('INSTALL_FAILED', `${c.name}@${c.version} no longer has the file server runs (${binName ? `bin '${binName}'` : rel}); nothing was changed. Install it as a new server with 'mcp-warden install ${c.name}@${c.version} --entry FILE'.`);
  }
  return file;
}

export async function upgrade(paths: HomePaths, req: UpgradeRequest, hooks: UpgradeHooks): Promise<UpgradeReport> {
  const server = serverById(loadServers(paths), req.id, paths);
  const pkg = server.package;
  if (!pkg) throw new WardenError('NOT_INSTALLED', `server '${req.id}' was not installed with 'mcp-warden install', so there is no package to upgrade; re-add it with its new command (mcp-warden add), or install the package.`);
  const oldDir = entryDir(paths, pkg.store);
  const oldRecord = readInstallRecord(oldDir);
  const report: UpgradeReport = { id: req.id, name: pkg.name, from: { version: pkg.version, integrity: pkg.integrity, store: pkg.store, ...(oldRecord ? { tree: oldRecord.tree.sha256 } : {}), ...(server.identity ? { publisher: server.identity } : {}) }, switched: false };

  const packument = await fetchPackument(pkg.name);
  const version = resolveVersion(packument, req.to);
  if (version === pkg.version || (req.to === undefined && semver.lte(version, pkg.version))) return { ...report, current: true };

  const root = loadTrustRoot(paths);
  const c = await makeCandidate(pkg.name, version, root, { packument });
  report.provenance = c.provenance?.identity;
  report.judgement = judgeUpgrade(`${pkg.name}@${version}`, server.provenance ?? 'off', server.identity, c.provenance?.identity, req);
  const judgement = report.judgement;

  return withStoreLock(paths, async () => {
    await sweepStaleStaging(paths, hooks.say);
    const store: StoreEntry = await putInStore(paths, c, root, judgement.unsigned ? 'upgrade' : undefined);
    let staged: Awaited<ReturnType<typeof stageUpgrade>> | undefined;
    try {
      report.to = { version: c.version, integrity: c.integrity, store: store.name, tree: store.record.tree.sha256, created: store.created };
      const script = nextScript(server, packageDirOf(oldDir, pkg.name), store.pkgDir, c);
      const next: ServerConfig = {
        ...server,
        args: [script, ...server.args.slice(1)],
        package: { name: c.name, version: c.version, integrity: c.integrity, store: store.name },
        provenance: judgement.policy,
      };
      delete next.identity;
      if (judgement.identity) next.identity = judgement.identity;
      const cache = loadDigestCache(paths, req.id);
      report.plan = await planEnrollment(paths, req.id, { command: next.command, args: next.args, env: next.env, passEnv: next.passEnv, posture: next.posture, ...(next.cwd ? { cwd: next.cwd } : {}) }, cache);
      saveDigestCache(paths, req.id, cache);
      // Trying the new version runs it, with the server's environment (its credentials too): only on a first yes.
      report.stagedEnv = { env: Object.keys(next.env).sort(), passEnv: [...next.passEnv].sort() };
      if (!(await hooks.confirmStage(report))) return report;
      report.staged = true;
      staged = await stageUpgrade(paths, req.id, next, report.plan, hooks.say, req.acceptFindings);
      report.diff = staged.diff;
      if (staged.enrollment.lockError) throw staged.enrollment.lockError;
      if (!(await hooks.confirm(report))) return report;

      const now = new Date().toISOString();
      const treePath = report.plan.artifacts.find((a) => a.kind === 'package')?.path;
      const treeProvenance = { package: `${c.name}@${c.version}`, integrity: c.integrity, ...(c.provenance ? { publisher: publisherRecord(c.provenance.identity), verifiedAt: store.record.verifiedAt } : { unsigned: judgement.override ?? 'preferred' }) };
      const entries = (staged.allowlist as AllowlistEntry[]).map((e) => ({ ...e, addedAt: now, note: `added by 'mcp-warden upgrade ${req.id}'`, ...(e.path === treePath ? { provenance: treeProvenance } : {}) }));
      const lock = staged.locks.tools.get(req.id);
      if (!lock) throw new WardenError('LOCK_MISSING', `the new version of '${req.id}' was launched but no lock entry came of it; nothing was changed.`);
      const by = `upgrade ${req.id}`;
      const switched = await switchServer(paths, req.id, server, oldDir, { server: { ...staged.server, ...(next.identity ? { identity: next.identity } : {}) }, entries, lock, extra: staged.locks.warden.get(req.id) });
      report.switched = true;
      for (const e of switched.removed) await appendAudit(paths.audit, { event: 'allowlist_changed', action: 'remove', path: e.path, kind: e.kind, sha256: e.sha256, by });
      for (const e of switched.added) await appendAudit(paths.audit, { event: 'allowlist_changed', action: 'add', path: e.path, kind: e.kind, sha256: e.sha256, by });
      for (const r of switched.replaced) await appendAudit(paths.audit, { event: 'allowlist_changed', action: 'replace', path: r.entry.path, kind: r.entry.kind, sha256: r.entry.sha256, previousSha256: r.previous.sha256, by });
      const provenance = c.provenance ? publisherRecord(c.provenance.identity) : ('unsigned' as const);
      if (judgement.override) {
        await appendAudit(paths.audit, { event: 'provenance_override', server: req.id, package: c.name, version: c.version, reason: judgement.override, ...(server.identity ? { pinned: server.identity } : {}), ...(c.provenance ? { presented: publisherRecord(c.provenance.identity) } : {}), by });
      }
      if (judgement.unsigned && !judgement.override && judgement.policy === 'preferred') {
        await appendAudit(paths.audit, { event: 'unsigned_admitted', server: req.id, package: c.name, version: c.version, integrity: c.integrity, how: 'policy-preferred', by });
      }
      await appendAudit(paths.audit, { event: 'package_upgraded', server: req.id, package: c.name, from: { version: pkg.version, integrity: pkg.integrity, store: pkg.store }, to: { version: c.version, integrity: c.integrity, store: store.name }, provenance, by });
      await appendAudit(paths.audit, { event: 'surface', server: req.id, source: 'upgrade', pinState: 'changed', surfaceHash: lock.surface_hash, ...(staged.diff.entry ? { lockedSurfaceHash: staged.diff.entry.surface_hash, lockedRevision: staged.diff.entry.protocol.era } : {}), revision: lock.protocol.era, changed: [] });
      return report;
    } finally {
      if (staged) await discardStaging(staged.paths, paths);
      if (!report.switched && store.created) removeEntry(store.dir);
    }
  });
}
