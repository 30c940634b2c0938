import fs from 'node:fs';
import path from 'node:path';
import { WardenError } from '../error.js';
import { printable } from '../escape.js';
import { DF_1_NODEFLIB, parseElf, readElf, type ElfInfo } from './elf.js';
import { hostLdCache } from './ld-cache.js';
import { LD_PRELOAD_FILE, preloadNames } from './ld-preload.js';

// The shared objects an ELF program loads before its first instruction, found as glibc's ld.so finds them for a
// launch by the warden (whose environment never carries LD_LIBRARY_PATH, LD_PRELOAD or LD_AUDIT: launch/env.ts builds
// it, store/servers.ts refuses every LD_* name in a server's env and passEnv):
// its program interpreter (PT_INTERP), then breadth first every DT_NEEDED name not already loaded (by name or
// soname), searched in the DT_RPATH of the needing object and of the objects that loaded it (only when it has no
// DT_RUNPATH), its own DT_RUNPATH, /etc/ld.so.cache, and the default directories, unless it was linked with
// -z nodeflib. In each directory the glibc-hwcaps and legacy hwcap subdirectories come first: every variant
// present there is kept (which one ld.so picks depends on the CPU), so the set over-approximates what loads.
// A name that cannot be found, or a search path the warden cannot evaluate ($LIB, $PLATFORM, a relative
// directory), refuses the launch (docs/adr/0065-native-libraries.md). Libraries opened later (dlopen) are not here.

const MAX_OBJECTS = 512;
/** Directories one DT_RPATH or DT_RUNPATH may name (real ones name one to three). */
const MAX_DIRS = 64;
/** The directories ld.so searches last (glibc's system search path; Debian's multiarch ones, then the others). */
const DEFAULT_DIRS: Record<string, string[]> = {
  '2:1:62': ['/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu', '/lib64', '/usr/lib64', '/lib', '/usr/lib'],
  '2:1:183': ['/lib/aarch64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/lib64', '/usr/lib64', '/lib', '/usr/lib'],
  '1:1:3': ['/lib/i386-linux-gnu', '/usr/lib/i386-linux-gnu', '/lib32', '/usr/lib32', '/lib', '/usr/lib'],
};
/** Legacy hwcap subdirectories glibc 2.36 searches under each directory (ld.so --help), up to "tls/x86_64/x86_64". */
const LEGACY = ['tls', 'x86_64', 'haswell', 'avx512_1', 'xeon_phi', 'aarch64'];

export interface LoadedObject {
  /** The path ld.so opens (its $ORIGIN is this path's directory). */
  path: string;
  realpath: string;
  info: ElfInfo;
  /** The object that needed it (undefined for the program and its interpreter). */
  loader?: LoadedObject;
  /** "interpreter" or the DT_NEEDED name it was found for. */
  as: string;
}

function refuse(code: 'LIBRARY_NOT_FOUND' | 'LIBRARY_PATH_UNSUPPORTED', text: string): never {
  throw new WardenError(code, text);
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The glibc-hwcaps subdirectories ld.so (glibc 2.36) searches on each machine, best first ("Subdirectories of
 *  glibc-hwcaps directories" in `ld.so --help`): only these names are looked at, whatever else the directory holds. */
const HWCAPS: Record<string, string[]> = {
  '2:1:62': ['x86-64-v4', 'x86-64-v3', 'x86-64-v2'],
};
/** Entries of glibc-hwcaps/ looked at on a machine without a list above (none is known there): more is refused. */
const MAX_HWCAPS = 64;

/** The subdirectories of `dir` searched before it: glibc-hwcaps/* and the legacy hwcap names, those present. */
function hwcapDirs(dir: string, kind: string): string[] {
  const out: string[] = [];
  const hw = path.join(dir, 'glibc-hwcaps');
  const known = HWCAPS[kind];
  if (known) {
    for (const n of known) if (isDir(path.join(hw, n))) out.push(path.join(hw, n));
  } else if (isDir(hw)) {
    let entries: string[] = [];
    try {
      entries = fs.readdirSync(hw);
    } catch {
      /* unreadable: ld.so cannot read it either */
    }
    if (entries.length > MAX_HWCAPS) refuse('LIBRARY_PATH_UNSUPPORTED', `${hw} holds ${entries.length} entries, more than the ${MAX_HWCAPS} the warden looks at on this machine; ld.so may load a library from any of them. Remove what does not belong there.`);
    for (const e of entries) out.push(path.join(hw, e));
  }
  const walk = (at: string, depth: number): void => {
    if (depth === 3) return;
    for (const n of LEGACY) {
      const sub = path.join(at, n);
      if (!isDir(sub)) continue;
      out.push(sub);
      walk(sub, depth + 1);
    }
  };
  walk(dir, 0);
  return out;
}

/** A DT_RPATH or DT_RUNPATH value as the directories it names, $ORIGIN expanded. */
function searchDirs(value: string, obj: LoadedObject): string[] {
  const parts = value.split(':');
  if (parts.length > MAX_DIRS) refuse('LIBRARY_PATH_UNSUPPORTED', `${obj.path} searches its libraries in ${parts.length} directories, more than the ${MAX_DIRS} the warden follows. Run another build.`);
  return parts.map((d) => {
    const dir = d.replaceAll(/\$(ORIGIN\b|\{ORIGIN\})/g, path.dirname(obj.path));
    if (dir.includes('$')) refuse('LIBRARY_PATH_UNSUPPORTED', `${obj.path} searches its libraries in "${printable(d)}", which names $LIB, $PLATFORM or another token the warden does not evaluate. Rebuild it with a literal or $ORIGIN-relative RUNPATH, or run another build.`);
    if (!path.isAbsolute(dir)) refuse('LIBRARY_PATH_UNSUPPORTED', `${obj.path} searches its libraries in "${printable(d)}", relative to the server's working directory. Rebuild it with an absolute or $ORIGIN-relative RUNPATH, or run another build.`);
    return path.normalize(dir);
  });
}

/** The object at `p` if ld.so would take it for an object of `kind` (it skips files of another class or machine). */
function candidate(p: string, kind: string, as: string, loader: LoadedObject | undefined): LoadedObject | undefined {
  if (!isFile(p)) return undefined;
  let realpath: string;
  try {
    realpath = fs.realpathSync(p);
  } catch {
    return undefined;
  }
  const { info } = readElf(realpath, 20, kind);
  return info ? { path: p, realpath, info, as, ...(loader ? { loader } : {}) } : undefined;
}

/** Every object ld.so may take for `name` in `dir`: its hwcap variants, then the plain one. */
function inDir(dir: string, name: string, kind: string, loader: LoadedObject): LoadedObject[] {
  return [...hwcapDirs(dir, kind), dir].map((d) => candidate(path.join(d, name), kind, name, loader)).filter((o) => o !== undefined);
}

function find(name: string, needer: LoadedObject, program: LoadedObject): LoadedObject[] {
  const kind = program.info.kind;
  if (name.includes('/')) {
    const p = name.replaceAll(/\$(ORIGIN\b|\{ORIGIN\})/g, path.dirname(needer.path));
    if (!path.isAbsolute(p)) refuse('LIBRARY_PATH_UNSUPPORTED', `${needer.path} needs the library "${printable(name)}" by a path relative to the server's working directory. Rebuild it, or run another build.`);
    const found = candidate(p, kind, name, needer);
    return found ? [found] : [];
  }
  const dirs: string[] = [];
  if (needer.info.runpath === undefined) {
    // The needing object, then the one that loaded it, up to the program (every chain ends there).
    for (let o: LoadedObject | undefined = needer; o; o = o.loader) if (o.info.rpath !== undefined && o.info.runpath === undefined) dirs.push(...searchDirs(o.info.rpath, o));
  } else dirs.push(...searchDirs(needer.info.runpath, needer));
  for (const d of dirs) {
    const found = inDir(d, name, kind, needer);
    if (found.length > 0) return found;
  }
  if ((needer.info.flags1 & DF_1_NODEFLIB) !== 0n) return [];
  const cached = hostLdCache().lookup(name, kind).map((p) => candidate(p, kind, name, needer)).filter((o) => o !== undefined);
  if (cached.length > 0) return cached;
  for (const d of DEFAULT_DIRS[kind] ?? []) {
    const found = inDir(d, name, kind, needer);
    if (found.length > 0) return found;
  }
  return [];
}

/** The program's interpreter and every library it needs, recursively (the program itself not included). */
export function neededObjects(programPath: string, info: ElfInfo): LoadedObject[] {
  const program: LoadedObject = { path: programPath, realpath: programPath, info, as: 'program' };
  const out: LoadedObject[] = [];
  const names = new Set<string>();
  if (info.soname) names.add(info.soname);
  if (info.interp !== undefined) {
    if (!path.isAbsolute(info.interp)) refuse('LIBRARY_PATH_UNSUPPORTED', `${programPath} names the program interpreter "${printable(info.interp)}", a relative path. Run another build.`);
    let interp: LoadedObject;
    try {
      interp = { path: info.interp, realpath: fs.realpathSync(info.interp), info: parseElf(fs.realpathSync(info.interp)), as: 'interpreter' };
    } catch (err) {
      if (err instanceof WardenError) throw err;
      refuse('LIBRARY_NOT_FOUND', `the program interpreter "${printable(info.interp)}" of ${programPath} cannot be found; the program could not start. Install it, or run another build.`);
    }
    out.push(interp);
    names.add(path.basename(info.interp));
    if (interp.info.soname) names.add(interp.info.soname);
  }
  const queue: LoadedObject[] = [program];
  const add = (found: LoadedObject[]): void => {
    for (const o of found) {
      if (o.info.soname) names.add(o.info.soname);
      if (out.some((x) => x.realpath === o.realpath)) continue;
      if (out.length >= MAX_OBJECTS) refuse('LIBRARY_NOT_FOUND', `${programPath} loads more than ${MAX_OBJECTS} shared objects; the warden attests at most that many.`);
      out.push(o);
      queue.push(o);
    }
  };
  // /etc/ld.so.preload's objects come first, for every dynamic program; one ld.so cannot load is skipped (as ld.so does).
  if (info.interp !== undefined) {
    for (const name of preloadNames()) {
      if (name.includes('$')) refuse('LIBRARY_PATH_UNSUPPORTED', `${LD_PRELOAD_FILE} names "${printable(name)}", with a token the warden does not evaluate; ld.so loads it into every program. Remove it.`);
      if (names.has(name)) continue;
      const found = find(name, program, program);
      if (found.length > 0) names.add(name);
      add(found);
    }
  }
  for (let i = 0; i < queue.length; i++) {
    const obj = queue[i] as LoadedObject;
    // An rtld-audit module (honoured in the program, ignored elsewhere: refused everywhere) can rewrite every later
    // lookup ld.so makes (la_objsearch): what this resolution finds would not be what loads.
    if (obj.info.audit !== undefined) refuse('LIBRARY_PATH_UNSUPPORTED', `${obj.path} names the rtld-audit module "${printable(obj.info.audit)}" (DT_AUDIT), which may change which library ld.so loads for every name; the warden cannot attest what it would load. Rebuild it without --audit, or run another build.`);
    for (const name of obj.info.needed) {
      if (names.has(name)) continue;
      const found = find(name, obj, program);
      if (found.length === 0) refuse('LIBRARY_NOT_FOUND', `the library "${printable(name)}" needed by ${obj.path} is found nowhere ld.so would look for it (its RPATH or RUNPATH, /etc/ld.so.cache, the system directories); the program could not start. Install it, or run another build.`);
      names.add(name);
      add(found);
    }
    // Filtees (DT_AUXILIARY, DT_FILTER) are mapped with the object that names them, searched like DT_NEEDED; a
    // missing auxiliary filtee is skipped by ld.so, a missing DT_FILTER one fails the load.
    for (const { name, auxiliary } of obj.info.filtees) {
      if (names.has(name)) continue;
      const found = find(name, obj, program);
      if (found.length === 0 && !auxiliary) refuse('LIBRARY_NOT_FOUND', `the filtee "${printable(name)}" of ${obj.path} (DT_FILTER) is found nowhere ld.so would look for it; the program could not start. Install it, or run another build.`);
      if (found.length > 0) names.add(name);
      add(found);
    }
  }
  return out;
}
