import fs from 'node:fs';
import { WardenError } from '../error.js';

// The folders a sandbox proposal grants that were not there (sandbox/propose.ts `created`: the server made them
// in its observed enrollment launch, which kept them off the real files): made when the proposal is applied,
// empty and owner-only, before the sandbox that grants them is validated and pinned (removed again if it is not).

/** Removes `d` if it is an empty directory; leaves anything else as it is. */
export const removeEmpty = (d: string): void => {
  try {
    fs.rmdirSync(d);
  } catch {
    // not empty any more, or gone: left as it is
  }
};

/** Creates the proposed folders that are not there (owner-only, one level: the parent was there at enrollment);
 *  one that is there must be a directory, not a link. Returns those it created. */
export function createFolders(id: string, dirs: readonly string[]): string[] {
  const made: string[] = [];
  for (const d of dirs) {
    try {
      fs.mkdirSync(d, { mode: 0o700 });
      made.push(d);
    } catch (err) {
      const there = (err as NodeJS.ErrnoException).code === 'EEXIST' && fs.lstatSync(d).isDirectory();
      if (!there) {
        for (const m of made) removeEmpty(m);
        throw new WardenError('SANDBOX_INVALID', `the proposed write grant ${d} of server '${id}' could not be created as a folder (${(err as NodeJS.ErrnoException).code ?? 'error'}: ${(err as NodeJS.ErrnoException).code === 'EEXIST' ? 'something that is not a directory is there now' : 'its parent is gone or not writable'}). Nothing was changed; look at that path, then apply the proposal again.`);
      }
    }
  }
  return made;
}
