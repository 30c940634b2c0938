import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

// Everything a directory tree holds, as one comparable value: for each path below it (the root included, as
// "."), its type and permission bits, and a file's sha256 or a symlink's target. Two snapshots are equal when
// nothing was created, removed, rewritten with other bytes or re-moded in between (times are not compared).

export function treeSnapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    const p = path.join(root, rel);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      return; // a tree that does not exist has no entries
    }
    const mode = (st.mode & 0o7777).toString(8).padStart(4, '0');
    if (st.isSymbolicLink()) out[rel] = `link ${fs.readlinkSync(p)}`;
    else if (st.isFile()) out[rel] = `file ${mode} ${crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex')}`;
    else if (st.isDirectory()) {
      out[rel] = `dir ${mode}`;
      for (const name of fs.readdirSync(p).sort()) walk(rel === '.' ? name : path.join(rel, name));
    } else out[rel] = `other ${mode}`;
  };
  walk('.');
  return out;
}
