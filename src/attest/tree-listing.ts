import path from 'node:path';
import { printable } from '../escape.js';
import { closureDigest, type TreeListing } from './tree.js';

// What changed in a package tree since it was allowlisted, named file by file as `dpkg -V` does: the listing the
// tree's digest was computed from when it was allowlisted (store/tree-listings.ts keeps it) against the one just
// computed. The listing only explains a refusal; admission stays the tree digest's (a listing is used only when
// its own digest is the allowlisted one, so it is the listing of what was allowlisted).

/** How many changed files a refusal names (then a count of the rest). */
export const SHOWN_CHANGES = 10;

/** File names that are code node (or a package's scripts) may load: a new file with any other extension looks
 *  like data the server wrote. */
const CODE = new Set(['.js', '.mjs', '.cjs', '.jsx', '.ts', '.mts', '.cts', '.tsx', '.json', '.node', '.wasm', '.map', '.sh']);

export interface TreeChange {
  /** Absolute path of the entry. */
  path: string;
  change: 'added' | 'removed' | 'changed';
  /** For `changed`: contents, mode, link target or type. */
  what?: string;
}

/** The listing's entries by absolute path: "f\0rel\0x\0sha256", "l\0rel\0target", "d\0rel", "o\0rel". */
function entries(listing: TreeListing): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of listing.packages) for (const line of p.lines) out.set(path.join(p.dir, line.split('\0')[1] ?? ''), line);
  return out;
}

function whatChanged(was: string, now: string): string {
  const [a, , ax, asha] = was.split('\0');
  const [b, , bx, bsha] = now.split('\0');
  if (a !== b) return 'its type';
  if (a === 'l') return 'its link target';
  if (a === 'f' && asha === bsha && ax !== bx) return 'its mode';
  return 'its contents';
}

/** Whether `recorded` is the listing of a tree with digest `sha256` (a listing that is not proves nothing). */
export function listingMatches(recorded: TreeListing, sha256: string): boolean {
  return closureDigest(recorded) === sha256;
}

/** The entries added, removed or changed from `recorded` to `current`, sorted by path; and the dependencies
 *  that went missing or came back. */
export function treeChanges(recorded: TreeListing, current: TreeListing): { files: TreeChange[]; missing: string[] } {
  const was = entries(recorded);
  const now = entries(current);
  const files: TreeChange[] = [];
  for (const [p, line] of now) {
    const before = was.get(p);
    if (before === undefined) files.push({ path: p, change: 'added' });
    else if (before !== line) files.push({ path: p, change: 'changed', what: whatChanged(before, line) });
  }
  for (const p of was.keys()) if (!now.has(p)) files.push({ path: p, change: 'removed' });
  files.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  const missing = [...new Set([...recorded.missing, ...current.missing])].filter((m) => recorded.missing.includes(m) !== current.missing.includes(m)).sort();
  return { files, missing };
}

/** Whether an added file looks like data rather than code (memory.jsonl, a .db, a .log). */
export function looksLikeData(file: string): boolean {
  const base = path.basename(file);
  const ext = path.extname(base).toLowerCase();
  return ext !== '' && !CODE.has(ext);
}

/** One or two sentences for a refusal or `status`: the first SHOWN_CHANGES changes, relative to `root` where
 *  under it, escaped; a count of the rest; and what to do when new files look like data the server wrote. */
export function describeTreeChanges(root: string, changes: { files: TreeChange[]; missing: string[] }): string {
  const name = (p: string): string => `"${printable(p.startsWith(root + path.sep) ? p.slice(root.length + 1) : p, 160)}"`;
  const shown = changes.files.slice(0, SHOWN_CHANGES).map((c) => `${c.change} ${name(c.path)}${c.what ? ` (${c.what})` : ''}`);
  const more = changes.files.length > SHOWN_CHANGES ? `, and ${changes.files.length - SHOWN_CHANGES} more` : '';
  const missing = changes.missing.length > 0 ? ` Dependencies missing now or no longer: ${changes.missing.slice(0, SHOWN_CHANGES).map((m) => `"${printable(m, 120)}"`).join(', ')}.` : '';
  const count = `${changes.files.length} ${changes.files.length === 1 ? 'entry' : 'entries'}`;
  let text = changes.files.length > 0 ? `Since it was allowlisted (${count}): ${shown.join('; ')}${more}.${missing}` : `No file of it changed since it was allowlisted.${missing}`;
  const data = changes.files.filter((c) => c.change === 'added' && looksLikeData(c.path));
  if (data.length > 0) {
    const named = data.slice(0, 3).map((c) => name(c.path)).join(', ');
    text +=
      ` ${named} ${data.length === 1 ? 'is a new file that is' : 'are new files that are'} not code: likely data the server wrote beside its own files.` +
      " Set the server's data path outside its package (the variable or argument its documentation gives, e.g. MEMORY_FILE_PATH for server-memory: 'mcp-warden add' or 'install' with --env NAME=PATH), move the file out of the package, and launch it again.";
  }
  return text;
}
