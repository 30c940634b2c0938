import fs from 'node:fs';
import path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import type { LaunchPlan, TreeMemo } from '../attest/plan.js';
import { refuseIfPreloaded } from '../attest/self.js';
import { refuseClientCommands } from '../clientconfig/client-commands.js';
import { readClientConfig, CLIENT_LABELS, type ClientConfig } from '../clientconfig/read.js';
import { backup, rewriteClientFile } from '../clientconfig/write.js';
import { WardenError } from '../error.js';
import { loadAllowlist } from '../store/allowlist.js';
import { loadDigestCache, saveDigestCache } from '../store/digest-cache-file.js';
import { openHome } from '../store/home.js';
import { loadImports, locationKey, updateImports, type ImportRecord } from '../store/imports.js';
import { loadLocks } from '../store/locks.js';
import { resolveHome, type HomePaths } from '../store/paths.js';
import { loadServers } from '../store/servers.js';
import { lockAndBaseline, planEnrollment, trustAndAdd } from '../enroll/enrollment.js';
import { acceptedFindings } from './accept-findings.js';
import { chooseId, defaultHome, propose, outcomeOf, specFor, wardenLaunch, wrapInto, type Outcome, type Proposal } from '../enroll/import-plan.js';
import { auditInstalled, installedRecord, prepareInstall, type Prepared } from '../enroll/npm/install.js';
import { putInStore } from '../enroll/npm/store-entry.js';
import { readInstallRecord, removeEntry, withStoreLock } from '../store/package-store.js';
import { confirm, describeArtifact, escaped, escapedLines, line, lockedTools, printJson, progress, progressDone } from './output.js';
import { offerStrictMode } from './rules-offer.js';
import { command } from './rules-print.js';
import { printProposal } from './sandbox-proposal.js';
import type { SandboxProposal } from '../sandbox/propose.js';

// `mcp-warden import <client-config-file>`: every stdio server of a client's configuration is enrolled (allowlist,
// servers.json, lock, canary baselines) and its entry rewritten to launch it through the warden; remote entries
// are reported and left alone; registry launchers are refused, or with --install replaced by a pinned install.
// A backup of the file is taken first; only the replaced entries' bytes change; imports.json records their
// original text for `unwrap`. Importing again changes nothing.

export interface ImportOptions {
  yes?: boolean;
  dryRun?: boolean;
  install?: boolean;
  allowUnsigned?: boolean;
  acceptFindings?: string;
  json?: boolean;
}

/** Verifies the package an `npx <package>` entry names, as `install` does (nothing written). */
async function prepareNpx(paths: HomePaths, pkg: string, opts: ImportOptions, dryRun: boolean): Promise<Prepared> {
  const prepared = await prepareInstall(paths, { spec: pkg, allowUnsigned: opts.allowUnsigned === true, dryRun }, {});
  if (!prepared.script) throw new WardenError('INSTALL_FAILED', `${prepared.why}; install it with 'mcp-warden install ${pkg} --entry FILE' instead.`);
  return prepared;
}

/** Turns an `npx <package>` entry into a plain one running the verified package from the sealed store. */
async function resolveNpx(paths: HomePaths, p: Proposal, taken: Set<string>, opts: ImportOptions): Promise<Proposal> {
  if (p.plan.action !== 'npx') return p;
  const prepared = await prepareNpx(paths, p.plan.pkg, opts, false);
  // Under the store lock only while the entry is made: `store gc` keeps an entry for an hour after it was
  // installed, so it survives until the import names it in servers.json.
  const store = await withStoreLock(paths, () => putInStore(paths, prepared.c, prepared.root, prepared.unsigned));
  const plan = { action: 'import' as const, command: process.execPath, args: [path.join(store.pkgDir, prepared.script as string), ...p.plan.args], env: p.plan.env, wardenEnv: p.plan.wardenEnv, ...(p.plan.cwd ? { cwd: p.plan.cwd } : {}) };
  const spec = { ...specFor(plan), installed: installedRecord(prepared, store) };
  const { id, reuse } = chooseId(p.entry, spec, loadServers(paths), taken);
  taken.add(id);
  return { ...p, plan, spec, id, reuse, installed: `${prepared.c.name}@${prepared.c.version}`, npm: { prepared, store } };
}

/** The names of the entry's variables the warden reads itself, which leave the client's entry for servers.json. */
function movedEnv(p: Proposal): string[] {
  return p.plan.action === 'import' || p.plan.action === 'npx' ? Object.keys(p.plan.wardenEnv).sort() : [];
}

/** Says which variables moved (names only: values can be secrets). */
function movedNote(p: Proposal): string {
  const moved = movedEnv(p);
  return moved.length > 0 ? `; ${moved.join(', ')} moved from the entry's env into servers.json (the warden reads ${moved.length === 1 ? 'it' : 'them'} itself; the server still gets ${moved.length === 1 ? 'it' : 'them'})` : '';
}

/** What an installed package's provenance was, for the import report. */
function provenanceNote(prepared: Prepared): string {
  const pub = prepared.c.provenance?.identity;
  return pub ? `provenance: ${pub.repository} ${pub.workflow}${pub.ref ? ` ${pub.ref}` : ''}` : `UNSIGNED, admitted by ${prepared.unsigned ?? '--allow-unsigned'}`;
}

/** An entry that launches the warden already: fine if it names a server of this home, refused otherwise. */
function wrappedOutcome(p: Proposal, target: { id: string; home?: string }, paths: HomePaths, known: Set<string>): Outcome {
  // The entry's DIR is literal and in its normal form (warden-entry.ts): compared as written, never resolved.
  const home = target.home ?? defaultHome();
  if (home !== paths.home) return outcomeOf(p, 'refused', `it already runs server '${target.id}' through the warden, but with the home ${home}; to look at it: mcp-warden --home ${home} status ${target.id}`);
  if (!known.has(target.id)) return outcomeOf(p, 'refused', `it runs 'mcp-warden run ${target.id}', but ${paths.servers} has no server '${target.id}'`);
  return outcomeOf({ ...p, id: target.id }, 'already', 'already launched through the warden');
}

/** Removes the store entries this import made for proposals it will not enroll (a reused entry is left). */
async function dropCreatedEntries(paths: HomePaths, proposals: Proposal[]): Promise<void> {
  const made = proposals.flatMap((p) => (p.npm?.store?.created ? [p.npm.store.dir] : []));
  if (made.length > 0) await withStoreLock(paths, () => made.forEach((d) => removeEntry(d)));
}

function summarize(outcomes: Outcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes) counts.set(o.result, (counts.get(o.result) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
}

export async function importVerb(homeFlag: string | undefined, file: string, opts: ImportOptions): Promise<number> {
  if (!opts.dryRun) refuseIfPreloaded(); // before anything is written: import launches each server to lock it
  const accept = acceptedFindings(opts.acceptFindings);
  const paths = resolveHome(homeFlag);
  openHome(paths, !opts.dryRun);
  const cfg = readClientConfig(path.resolve(file));
  refuseClientCommands(cfg);
  const launch = wardenLaunch(paths);
  const servers = loadServers(paths);
  // Every trust file (and imports.json) is read before anything is written (see add): a corrupt one refuses
  // the whole import.
  loadAllowlist(paths);
  loadLocks(paths);
  loadImports(paths);
  const proposals = propose(cfg, servers, launch);
  const taken = new Set(proposals.flatMap((p) => (p.id ? [p.id] : [])));
  const known = new Set(Object.keys(servers.servers));
  const outcomes: Outcome[] = [];
  // What a client file, a package or a server chose is in every message: each goes through the one escaper.
  const tell = (m: string): void => void (opts.json ? process.stderr.write(m + '\n') : line(m));
  const say = (m: string): void => tell(escaped(m));

  // Entries that will not be imported, said now; npx entries installed first when asked to.
  const todo: Proposal[] = [];
  for (const p of proposals) {
    if (p.plan.action === 'remote') outcomes.push(outcomeOf(p, 'remote', `${p.plan.url || 'a remote server'}: not a local process, left as it is`));
    else if (p.plan.action === 'wrapped') outcomes.push(wrappedOutcome(p, p.plan, paths, known));
    else if (p.plan.action === 'refused') outcomes.push(outcomeOf(p, 'refused', p.plan.code ? `${p.plan.code}: ${p.plan.reason}` : p.plan.reason));
    else if (p.plan.action === 'npx' && !opts.install) outcomes.push(outcomeOf(p, 'refused', `${p.plan.refusal} Or let the warden do it: mcp-warden import --install ${cfg.file}`));
    else todo.push(p);
  }
  if (opts.dryRun) {
    // Packages are verified as install would (nothing is written): a refusal shows now, not at the real import.
    const verified: Proposal[] = [];
    for (const p of todo) {
      if (p.plan.action !== 'npx') {
        verified.push(p);
        continue;
      }
      try {
        verified.push({ ...p, npm: { prepared: await prepareNpx(paths, p.plan.pkg, opts, true) } });
      } catch (err) {
        if (!(err instanceof WardenError)) throw err;
        outcomes.push(outcomeOf(p, 'refused', `${err.code}: ${err.message}`));
      }
    }
    return dryRun(cfg, verified, outcomes, launch, opts);
  }

  // Resolve and digest everything first, so that what will be trusted is shown before anything is written.
  const planned: { p: Proposal; plan: LaunchPlan }[] = [];
  const trees: TreeMemo = new Map(); // servers of one package tree digest it once
  for (const [i, raw] of todo.entries()) {
    progress(`[${i + 1}/${todo.length}] resolving and digesting '${escaped(raw.entry.name)}'...`);
    let p: Proposal | undefined;
    try {
      p = await resolveNpx(paths, raw, taken, opts);
      const id = p.id as string;
      const cache = loadDigestCache(paths, id);
      planned.push({ p, plan: await planEnrollment(paths, id, p.spec as NonNullable<Proposal['spec']>, cache, trees) });
      const cacheError = saveDigestCache(paths, id, cache);
      if (cacheError) say(cacheError);
    } catch (err) {
      if (!(err instanceof WardenError)) throw err;
      await dropCreatedEntries(paths, p ? [p] : []);
      outcomes.push(outcomeOf(raw, 'refused', `${err.code}: ${err.message}`));
    }
  }
  progressDone();
  if (planned.length > 0 && process.stdin.isTTY && !opts.yes) {
    for (const { p, plan } of planned) {
      say(`'${p.entry.name}' -> server '${p.id}'${p.reuse ? ' (already in servers.json)' : ''}, runs ${plan.file} ${plan.args.join(' ')}`);
      for (const a of plan.artifacts) tell(describeArtifact(a));
    }
    if (!(await confirm(`Trust these, enroll ${planned.length} server(s) and rewrite ${escaped(cfg.file)}? [y/N] `))) {
      await dropCreatedEntries(paths, planned.map(({ p }) => p));
      say('Nothing was enrolled and the file was not changed.');
      return 1;
    }
  }

  const backupFile = planned.length > 0 ? backup(paths, cfg.file, cfg.text) : undefined;
  let text = cfg.text;
  const records: ImportRecord[] = [];
  const newlyLocked: string[] = [];
  const sandboxProposals: { proposal: SandboxProposal; file: string }[] = [];
  for (const [i, { p, plan }] of planned.entries()) {
    const id = p.id as string;
    progress(`[${i + 1}/${planned.length}] enrolling '${escaped(id)}' (launching it to lock its surface)...`);
    if (!p.reuse) {
      const add = (): Promise<void> => trustAndAdd(paths, id, p.spec as NonNullable<Proposal['spec']>, plan, `import ${path.basename(cfg.file)}`, say);
      const store = p.npm?.store;
      if (store) {
        // Named under the store's lock, once it is checked to be still there: while the import waited for its
        // yes, `store gc` may have removed an entry it reused (one no server named, installed over an hour ago).
        const gone = await withStoreLock(paths, async () => {
          if (!fs.existsSync(store.dir) || !readInstallRecord(store.dir)) return true;
          await add();
          return false;
        });
        if (gone) {
          outcomes.push(outcomeOf(p, 'failed', `its store entry ${store.dir} was removed (store gc) while the import waited; nothing was enrolled for it. Import again.`));
          continue;
        }
        await auditInstalled(paths, id, p.npm?.prepared as Prepared, store, `import ${path.basename(cfg.file)}`);
      } else {
        await add();
      }
    }
    const enrolled = loadLocks(paths).tools.has(id) ? {} : await withEnv(p.plan.action === 'import' ? p.plan.env : {}, () => lockAndBaseline(paths, id, say, `import ${path.basename(cfg.file)}`, accept, undefined, undefined, 'client-file'));
    if (enrolled.lockError) {
      outcomes.push(outcomeOf(p, 'failed', `added to servers.json but its surface could not be locked, so the entry was left as it is: ${enrolled.lockError.message} Fix that, then import again.`));
      continue;
    }
    const wrapped = wrapInto(text, p.entry, id, launch, movedEnv(p));
    text = wrapped.text;
    const value = wrapped.value;
    records.push({ id, location: p.entry.location, original: p.entry.text, wrapped: value, importedAt: new Date().toISOString() });
    const detail = (p.installed ? `installed ${p.installed} (${p.npm ? provenanceNote(p.npm.prepared) : 'no provenance'}), ` : '') + (enrolled.lock ? `${plan.artifacts.length + (enrolled.modules?.length ?? 0)} artifact(s) allowlisted${enrolled.modules?.length ? ` (${enrolled.modules.length} module(s) it loaded from outside its package: ${enrolled.modules.map((m) => m.path).join(', ')})` : ''}, ${lockedTools(enrolled.lock.tools.length, loadLocks(paths).warden.get(id)?.conditional.length ?? 0)} locked, ${enrolled.baselines ?? 0} canary baseline(s)` : 'already enrolled');
    outcomes.push(outcomeOf(p, 'imported', detail + movedNote(p)));
    if (enrolled.lock) newlyLocked.push(id);
    if (enrolled.proposal) sandboxProposals.push(enrolled.proposal);
  }
  progressDone();
  if (records.length > 0) {
    rewriteClientFile(cfg, text);
    await updateImports(paths, (imports) => {
      const rec = Object.hasOwn(imports.files, cfg.file) ? (imports.files[cfg.file] as (typeof imports.files)[string]) : { client: cfg.kind, entries: [] };
      const replaced = new Set(records.map((r) => locationKey(r.location)));
      rec.entries = [...rec.entries.filter((r) => !replaced.has(locationKey(r.location))), ...records];
      imports.files[cfg.file] = rec;
    });
  }
  report(cfg, outcomes, opts, backupFile);
  if (!opts.json) for (const id of newlyLocked) await offerStrictMode(paths, homeFlag, id, process.stdin.isTTY === true && !opts.yes);
  if (!opts.json) for (const p of sandboxProposals) printProposal(p.proposal, p.file, (rest) => command(homeFlag, paths.home, rest));
  return outcomes.some((o) => o.result === 'refused' || o.result === 'failed') ? 3 : 0;
}

function report(cfg: ClientConfig, outcomes: Outcome[], opts: ImportOptions, backupFile?: string, diff?: string): void {
  if (opts.json) {
    printJson({ file: cfg.file, client: cfg.kind, dryRun: opts.dryRun === true, ...(backupFile ? { backup: backupFile } : {}), ...(diff !== undefined ? { diff } : {}), entries: outcomes });
    return;
  }
  if (diff) process.stdout.write(escapedLines(diff));
  line(escaped(`${cfg.file} (${CLIENT_LABELS[cfg.kind]}): ${outcomes.length === 0 ? 'no servers' : summarize(outcomes)}${opts.dryRun ? ' (dry run: nothing was written)' : ''}`));
  for (const o of outcomes) line(escaped(`  ${o.result.padEnd(9)}${o.project ? `${o.project}: ` : ''}${o.name}${o.id && o.id !== o.name ? ` (server '${o.id}')` : ''}${o.detail ? ` — ${o.detail}` : ''}`));
  if (backupFile) line(escaped(`Backup of the file as it was before this import: ${backupFile}. To switch back: mcp-warden unwrap ${cfg.file}`));
}

function dryRun(cfg: ClientConfig, todo: Proposal[], outcomes: Outcome[], launch: ReturnType<typeof wardenLaunch>, opts: ImportOptions): number {
  let text = cfg.text;
  for (const p of todo) {
    const id = p.id ?? p.entry.name;
    text = wrapInto(text, p.entry, id, launch, movedEnv(p)).text;
    const npm = p.npm?.prepared;
    outcomes.push(outcomeOf({ ...p, id }, 'imported', (npm ? `would install ${npm.c.name}@${npm.c.version} (${provenanceNote(npm)}), then enroll it` : 'would be enrolled') + movedNote(p)));
  }
  const diff = text !== cfg.text ? createTwoFilesPatch(cfg.file, cfg.file, cfg.text, text, 'now', 'after import') : '';
  report(cfg, outcomes, opts, undefined, diff);
  return outcomes.some((o) => o.result === 'refused') ? 3 : 0;
}

/** Runs `fn` with the client's literal env values set (what the client will pass when it launches the warden),
 *  so the enrolling launch starts the server as the client would; values with client variables are not known. */
async function withEnv<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = new Map<string, string | undefined>();
  for (const [k, v] of Object.entries(env)) {
    if (v.includes('${')) continue;
    saved.set(k, process.env[k]);
    process.env[k] = v;
  }
  try {
    return await fn();
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
