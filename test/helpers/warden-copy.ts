import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './warden.js';

// A private copy of the built warden whose one file a test alters: dist/ as hard links to the repository's built
// files (~0.1 s for its ~500 files, where copying them took ~0.7 s), but for the file to alter, which is a copy
// of its own; package.json copied, node_modules a symlink to the repository's. A hard link is the same file under
// another name: nothing may be written through the others (only `alterable` is a file of the copy's own).

/** Lays out the copy at `dir` (not made yet); returns its dist/cli/main.js and the path of its copy of `alterable`
 *  (a path under dist/, e.g. 'launch/preload/hooks.js'). */
export function wardenCopy(dir: string, alterable: string): { main: string; alterable: string } {
  const own = path.join(dir, 'dist', alterable);
  const lay = (from: string, to: string): void => {
    fs.mkdirSync(to);
    for (const e of fs.readdirSync(from, { withFileTypes: true })) {
      if (e.name === '.compile-cache') continue; // node's cache of the original's code, written in place: the copy makes its own
      const a = path.join(from, e.name);
      const b = path.join(to, e.name);
      if (e.isDirectory()) lay(a, b);
      else if (b === own) fs.copyFileSync(a, b);
      else fs.linkSync(a, b);
    }
  };
  fs.mkdirSync(dir);
  lay(path.join(ROOT, 'dist'), path.join(dir, 'dist'));
  if (!fs.existsSync(own)) throw new Error(`dist/${alterable} is not a file of the built warden`);
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return { main: path.join(dir, 'dist/cli/main.js'), alterable: own };
}
