import { WardenError } from '../error.js';
import type { DigestCache } from './cache.js';
import { digestFileAsync } from './digest.js';
import type { ElfInfo } from './elf.js';
import { neededObjects } from './libraries.js';
import type { Artifact } from './plan.js';
import { sameKey } from './stat-key.js';
import { isSystemLibrary } from './system-library.js';

// What an ELF executable loads before it runs, as artifacts of its plan: every shared object ld.so would map for
// it (attest/libraries.ts) that is not the system's (attest/system-library.ts) is digested as a `library` and
// must be allowlisted at its realpath with that digest, like a script. The system's are accepted as they are.
// Every object, the system's too, is looked for again after spawn in the process's own mappings
// (launch/mapped-files.ts).

/** One object ld.so was found to load at start: the name it was needed as ("interpreter" for PT_INTERP; several
 *  objects share a name when hwcaps variants exist), where it was found, and the inode ("dev:ino") read then. */
export interface StartupObject {
  as: string;
  path: string;
  realpath: string;
  inode: string;
}

/** The non-system shared objects `executable` (whose ELF header `info` was read before its digest) loads, digested
 *  (in load order: interpreter, then breadth first), and every object it loads at start. */
export async function libraryArtifacts(executable: Artifact, info: ElfInfo, cache: DigestCache | undefined): Promise<{ libraries: Artifact[]; startup: StartupObject[] }> {
  if (executable.key && !sameKey(info.key, executable.key)) {
    throw new WardenError('ARTIFACT_CHANGED', `${executable.path} changed between the reading of its ELF header and its digest; try again, and find out what is writing to it.`);
  }
  const memo = new Map<string, boolean>();
  const out: Artifact[] = [];
  const startup: StartupObject[] = [];
  for (const o of neededObjects(executable.path, info)) {
    startup.push({ as: o.as, path: o.path, realpath: o.realpath, inode: `${o.info.key.dev}:${o.info.key.ino}` });
    if (isSystemLibrary(o.realpath, memo)) continue;
    const d = await digestFileAsync(o.realpath, cache);
    if (!sameKey(d.key, o.info.key)) {
      throw new WardenError('ARTIFACT_CHANGED', `${o.realpath} (a library of ${executable.path}) changed between the reading of its ELF header and its digest; try again, and find out what is writing to it.`);
    }
    out.push({ kind: 'library', path: o.realpath, sha256: d.sha256, chain: o.path === o.realpath ? [o.realpath] : [o.path, o.realpath], key: d.key });
  }
  return { libraries: out, startup };
}
