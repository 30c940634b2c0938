import fs from 'node:fs';
import path from 'node:path';
import { WardenError, errnoOf } from '../error.js';
import { listEntries, readInstallRecord, removeEntry, withStoreLock } from './package-store.js';
import type { HomePaths } from './paths.js';
import { checkTrusted } from './perms.js';
import { loadServers } from './servers.js';

// `store gc`: under the store's lock (package-store.ts withStoreLock, which install holds too), removes every
// completed entry no server of servers.json names (once an hour has passed since its install), and half-made
// ones (".tmp-…", an install that died) older than an hour. An entry in use is never removed: named by a server (`package.store`, or a command, argument,
// cwd or module path inside it), or run from by a live process (after an upgrade, a session started before it
// still runs the old version). An entry that is not a completed one (no install.json, or an invalid one, or not
// a real directory) is reported and left for a person to look at.

export const HALF_MADE_PREFIX = '.tmp-';
export const HALF_MADE_AFTER_MS = 60 * 60 * 1000;
/** A completed entry no server names is kept this long after its install. */
export const FRESH_FOR_MS = 60 * 60 * 1000;

export interface GcRemoved {
  name: string;
  /** Bytes of the files in it. */
  bytes: number;
  /** 'unreferenced': a completed entry no server names; 'half-made': an abandoned .tmp- directory. */
  why: 'unreferenced' | 'half-made';
}

export interface GcKept {
  name: string;
  /** Why it stays, in words ("named by server fs", "run from by pid 123", "being made (12 min old)"). */
  why: string;
}

export interface GcProblem {
  name: string;
  problem: string;
}

export interface GcReport {
  dryRun: boolean;
  removed: GcRemoved[];
  kept: GcKept[];
  /** Entries that are not completed ones and not half-made: reported, never removed. */
  problems: GcProblem[];
}

export interface GcOptions {
  dryRun: boolean;
  now?: Date;
  /** Which live processes run from inside each directory (launch/proc.ts processesUsing). */
  processesUsing?: (dirs: readonly string[]) => Map<string, number[]>;
  /** Called when another process (an install) holds the store's lock and gc waits for it. */
  onWait?: () => void;
}

/** Bytes of the regular files below `dir` (symbolic links not followed). */
export function treeBytes(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += treeBytes(p);
    else if (e.isFile()) total += fs.lstatSync(p).size;
  }
  return total;
}

/** The entries each server names: its `package.store`, and any path of its command line inside the store. */
function namedByServers(paths: HomePaths): Map<string, string[]> {
  const named = new Map<string, string[]>();
  const add = (entry: string, id: string): void => void named.set(entry, [...new Set([...(named.get(entry) ?? []), id])]);
  let real = paths.storeDir;
  try {
    real = fs.realpathSync(paths.storeDir);
  } catch {
    // as it is
  }
  const roots = [...new Set([paths.storeDir, real])];
  for (const [id, s] of Object.entries(loadServers(paths).servers)) {
    if (s.package) add(s.package.store, id);
    for (const p of [s.command, ...s.args, s.cwd ?? '', ...(s.modules ?? [])].filter((a) => path.isAbsolute(a))) {
      for (const root of roots) {
        const rel = path.relative(root, p);
        if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) add(rel.split(path.sep)[0] as string, id);
      }
    }
  }
  return named;
}

/** Collects the store's garbage (or, with dryRun, says what it would remove). */
export async function collectStoreGarbage(paths: HomePaths, options: GcOptions): Promise<GcReport> {
  const report: GcReport = { dryRun: options.dryRun, removed: [], kept: [], problems: [] };
  if (!fs.existsSync(paths.storeDir)) return report;
  checkTrusted(paths.storeDir, 'the package store', 'file');
  const now = (options.now ?? new Date()).getTime();
  return withStoreLock(paths, (stillHeld) => {
    const named = namedByServers(paths); // an invalid servers.json is refused: gc cannot know what is in use
    const candidates: { name: string; why: GcRemoved['why'] }[] = [];

    for (const name of fs.readdirSync(paths.storeDir).filter((n) => n.startsWith(HALF_MADE_PREFIX)).sort()) {
      const st = fs.lstatSync(path.join(paths.storeDir, name));
      const age = now - st.mtimeMs;
      if (!st.isDirectory()) report.problems.push({ name, problem: 'not a directory (a half-made entry is one); look at it and remove it by hand' });
      else if (age > HALF_MADE_AFTER_MS) candidates.push({ name, why: 'half-made' });
      else report.kept.push({ name, why: `being made (${Math.max(0, Math.floor(age / 60_000))} min old; removed once older than an hour)` });
    }

    const unnamed: string[] = [];
    for (const name of listEntries(paths)) {
      const ids = named.get(name);
      if (ids) report.kept.push({ name, why: `named by server${ids.length > 1 ? 's' : ''} ${ids.join(', ')}` });
      else unnamed.push(name);
    }
    const running = options.processesUsing?.(unnamed.map((n) => path.join(paths.storeDir, n))) ?? new Map<string, number[]>();
    for (const name of unnamed) {
      const dir = path.join(paths.storeDir, name);
      const pids = running.get(dir);
      if (pids) {
        report.kept.push({ name, why: `run from by pid ${pids.join(', ')}` });
        continue;
      }
      const problem = notCompleted(dir);
      if (problem) {
        report.problems.push({ name, problem });
        continue;
      }
      // `import --install` makes its entries before it asks, and names them after: a fresh entry may be one.
      const age = now - Date.parse(readInstallRecord(dir)?.verifiedAt ?? '');
      if (age >= 0 && age < FRESH_FOR_MS) report.kept.push({ name, why: `installed ${Math.floor(age / 60_000)} min ago (an import may be about to name it; removed once older than an hour)` });
      else candidates.push({ name, why: 'unreferenced' });
    }

    for (const { name, why } of candidates) {
      const dir = path.join(paths.storeDir, name);
      const bytes = treeBytes(dir);
      if (!options.dryRun) {
        stillHeld();
        removeEntry(dir);
      }
      report.removed.push({ name, bytes, why });
    }
    return report;
  }, options.onWait);
}

/** Why `dir` is not a completed store entry, or undefined when it is one. */
function notCompleted(dir: string): string | undefined {
  try {
    const st = fs.lstatSync(dir);
    if (!st.isDirectory()) return `not a directory (${st.isSymbolicLink() ? 'a symbolic link' : 'a file'}); look at it and remove it by hand`;
    if (!readInstallRecord(dir)) return `no install.json: not an entry install completed; look at it, then remove it by hand (chmod -R u+w ${dir} && rm -r ${dir})`;
    return undefined;
  } catch (err) {
    if (err instanceof WardenError) return `${err.code}: ${err.message}`;
    return `cannot be read (${errnoOf(err) ?? String(err)})`;
  }
}
