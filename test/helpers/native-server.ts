import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SERVERS } from './warden.js';

// The C test server of test/servers/native, compiled with the host's cc: `server` needs `lib/libwl.so` through
// DT_RUNPATH=$ORIGIN/lib, and takes its name from it ("native-v1", or what a rebuilt library says).

const SOURCES = path.join(SERVERS, 'native');

/** Compiles libwl.so answering `name` to a temporary file beside `file`, then renames it over `file` (a new inode,
 *  as a rebuild or reinstall makes). */
export function buildLibrary(file: string, name: string): void {
  const tmp = `${file}.building`;
  execFileSync('cc', ['-shared', '-fPIC', `-DWL_NAME="${name}"`, '-Wl,-soname,libwl.so', '-o', tmp, path.join(SOURCES, 'libwl.c')]);
  fs.renameSync(tmp, file);
}

/** Builds the server and its library in `dir` (extra linker flags, e.g. another RUNPATH, in `ldflags`). */
export function buildNativeServer(dir: string, ldflags: string[] = ['-Wl,-rpath,$ORIGIN/lib', '-Wl,--enable-new-dtags']): { server: string; lib: string } {
  fs.mkdirSync(path.join(dir, 'lib'), { recursive: true });
  const lib = path.join(dir, 'lib/libwl.so');
  buildLibrary(lib, 'native-v1');
  const server = path.join(dir, 'server');
  execFileSync('cc', ['-O1', '-o', server, path.join(SOURCES, 'server.c'), `-L${path.join(dir, 'lib')}`, '-lwl', ...ldflags]);
  return { server, lib };
}
