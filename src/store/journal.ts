import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as v from 'valibot';
import { WardenError, errnoOf } from '../error.js';
import { syncDir, writeAtomic } from './atomic.js';
import { loadJsonFile } from './json-file.js';
import { JOURNAL_NAME } from './paths.js';

// Several trust files replaced as one step (docs/adr/0027-trust-commit-journal.md). A change that spans files
// (a bundle applied, an upgrade switched, rules pinned with the locks) is written in three moves by a writer
// holding every file's lock: each new file is staged beside its target as `NAME.next` (written and fsynced);
// `commit.journal` is written atomically, naming each file and the sha256 of its staged bytes (the commit point);
// then each staged file is renamed over its target, and the journal removed. A failure before the journal exists
// leaves every file as it was; after, the change is decided and whoever next takes those files' locks completes it
// from the journal (completeJournal, called by store/update.ts for every locked read-modify-write and by
// settlePendingCommit at the start of every command, `run` included), so nothing ever acts on half of it.

/** The only files a journal may name: the trust files of the home, side by side with it. */
const COMMITTABLE = ['servers.json', 'allowlist.json', 'tools.lock', 'warden.lock', 'bundle-state.json'] as const;
const STAGED = '.next';

const journalSchema = v.strictObject({
  version: v.literal(1),
  /** What the change was ("the trust bundle with serial 17"), for the audit line of a completion and the messages. */
  what: v.pipe(v.string(), v.maxLength(200)),
  files: v.pipe(
    v.array(v.strictObject({ name: v.picklist(COMMITTABLE), sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex digits')) })),
    v.minLength(1),
    v.check((fs) => new Set(fs.map((f) => f.name)).size === fs.length, 'a file is named twice'),
  ),
});

export type Journal = v.InferOutput<typeof journalSchema>;

export interface FileWrite {
  /** A trust file of the home (one of COMMITTABLE), by its full path. */
  file: string;
  data: string;
}

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

export function journalPath(dir: string): string {
  return path.join(dir, JOURNAL_NAME);
}

/** The journal of the directory, or undefined when there is none (the one lstat every command pays). */
export function readJournal(dir: string): Journal | undefined {
  const file = journalPath(dir);
  try {
    fs.lstatSync(file);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw new WardenError('FILE_UNREADABLE', `cannot inspect ${file} (${errnoOf(err) ?? String(err)}); the trust files of ${dir} are not used until it can be read.`);
  }
  try {
    return loadJsonFile(file, 'the commit journal', journalSchema, true);
  } catch (err) {
    if (!(err instanceof WardenError) || err.code === 'FILE_INSECURE') throw err;
    throw new WardenError('TRUST_COMMIT_INVALID', `${err.message} It records a change of several trust files that was interrupted, and cannot be completed, so no trust file of ${dir} is used. Restore servers.json, allowlist.json, tools.lock, warden.lock and bundle-state.json from a copy you trust (or check each), then remove ${file}.`);
  }
}

/** The full paths of the files a journal names, in `dir`. */
export function journalFiles(dir: string, j: Journal): string[] {
  return j.files.map((f) => path.join(dir, f.name));
}

function readIfPresent(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Completes the journal of `dir`: every staged file whose bytes are the ones recorded is renamed over its target;
 * a target already holding them was renamed before the interruption. Anything else (a staged file changed, both
 * missing) is refused and the journal kept: the warden fails closed rather than guess. The caller holds every
 * named file's lock.
 */
export function completeJournal(dir: string, j: Journal): void {
  const file = journalPath(dir);
  for (const { name, sha256: want } of j.files) {
    const target = path.join(dir, name);
    const staged = readIfPresent(target + STAGED);
    if (staged !== undefined && sha256(staged) === want) {
      fs.renameSync(target + STAGED, target);
      continue;
    }
    const current = readIfPresent(target);
    if (current !== undefined && sha256(current) === want) continue;
    throw new WardenError('TRUST_COMMIT_INVALID', `the interrupted change (${j.what}) recorded in ${file} cannot be completed: ${staged !== undefined ? `${target}${STAGED} is not the file it recorded` : `neither ${target} nor ${target}${STAGED} holds the bytes it recorded`}. No trust file of ${dir} is used until this is resolved: restore the trust files from a copy you trust (or check each), then remove ${file}.`);
  }
  syncDir(dir);
  fs.rmSync(file);
  syncDir(dir);
}

/** Files a change killed before its commit point staged (`NAME.next`, and the temporary file of its atomic write):
 *  no journal names them, and no one else stages while the journal's lock is held. */
function removeStrayStaged(dir: string): void {
  const stray = new RegExp(`^(${COMMITTABLE.map((n) => n.replace(/\./g, '\\.')).join('|')})\\.next(\\.[0-9a-f]+\\.tmp)?$`);
  for (const name of fs.readdirSync(dir)) if (stray.test(name)) fs.rmSync(path.join(dir, name), { force: true });
}

function removeStaged(writes: readonly FileWrite[]): void {
  for (const w of writes) fs.rmSync(w.file + STAGED, { force: true });
}

/**
 * Replaces `writes` as one step (the header above). The caller holds every file's lock (store/update.ts), and so
 * has completed any journal naming one of them; the journal's own lock keeps two changes of disjoint files from
 * writing it at once. `what` names the change for the journal. Throws TRUST_COMMIT_INCOMPLETE when a rename failed
 * after the commit point: the change is then recorded and the next command completes it.
 */
export function commitUnderJournalLock(writes: readonly FileWrite[], what: string): void {
  const dir = path.dirname(writes[0]!.file);
  const pending = readJournal(dir);
  if (pending) throw new WardenError('FILE_LOCKED', `an interrupted change (${pending.what}) is recorded in ${journalPath(dir)}; nothing was written. Run the command again: it completes that change first.`);
  removeStrayStaged(dir);
  const journal: Journal = { version: 1, what: what.slice(0, 200), files: writes.map((w) => ({ name: path.basename(w.file) as Journal['files'][number]['name'], sha256: sha256(w.data) })) };
  let target = '';
  try {
    for (const w of writes) {
      target = w.file;
      writeAtomic(w.file + STAGED, w.data);
    }
    target = journalPath(dir);
    writeAtomic(target, JSON.stringify(journal, null, 2) + '\n');
  } catch (err) {
    removeStaged(writes);
    if (!(err instanceof WardenError)) throw err;
    const cause = /\(([A-Z0-9]+):/.exec(err.message)?.[1] ?? err.code;
    throw new WardenError(err.code, `${capital(what)} was not applied: ${target} could not be written (${cause}), so nothing was changed: ${writes.map((w) => path.basename(w.file)).join(', ')} keep their previous content. Free space on the filesystem of ${dir} or fix its permissions, then run the command again.`);
  }
  try {
    completeJournal(dir, journal);
  } catch (err) {
    throw new WardenError('TRUST_COMMIT_INCOMPLETE', `${capital(what)} was decided but not every trust file could be replaced (${errnoOf(err) ?? (err as Error).message}). The change is recorded in ${journalPath(dir)}: the next mcp-warden command completes it before it reads any trust file, and no server of this home is launched until then. Fix the cause (disk space, permissions of ${dir}) and run 'mcp-warden status'.`);
  }
}

/** Checks that every write is a trust file of one directory; returns that directory. */
export function commitDir(writes: readonly FileWrite[]): string {
  const dir = path.dirname(writes[0]!.file);
  for (const w of writes) {
    const name = path.basename(w.file);
    if (path.dirname(w.file) !== dir || !(COMMITTABLE as readonly string[]).includes(name)) throw new Error(`commitFiles: ${w.file} is not a trust file of ${dir}`);
  }
  return dir;
}
