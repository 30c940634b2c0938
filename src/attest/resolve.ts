import fs from 'node:fs';
import path from 'node:path';
import { WardenError } from '../error.js';

// Resolution never consults the PATH the warden inherited: bare names are looked up in the trusted PATH of
// servers.json only. Every symlink hop of the final component is recorded, and the chain ends at the realpath
// (which also folds directory symlinks such as /bin -> usr/bin).

const MAX_HOPS = 40;

export interface ResolvedFile {
  /** The path as looked up (absolute). */
  requested: string;
  /** requested, each symlink target in turn, and the realpath last (no repeats). */
  chain: string[];
  realpath: string;
}

/** Finds a command: an absolute path as is, a relative one against cwd, a bare name in the trusted PATH. */
export function findCommand(command: string, trustedPath: string, cwd: string | undefined, what: string): ResolvedFile {
  if (command.includes('/')) {
    if (!path.isAbsolute(command) && !cwd) {
      throw new WardenError('COMMAND_NOT_FOUND', `${what} '${command}' is a relative path and no cwd is set; give an absolute path or set cwd.`);
    }
    const abs = path.resolve(cwd ?? '/', command);
    if (!isExecutableFile(abs)) {
      throw new WardenError('COMMAND_NOT_FOUND', `${what} ${abs} does not exist or is not an executable file.`);
    }
    return followChain(abs);
  }
  for (const dir of trustedPath.split(':')) {
    const candidate = path.join(dir, command);
    if (isExecutableFile(candidate)) return followChain(candidate);
  }
  throw new WardenError(
    'COMMAND_NOT_FOUND',
    `${what} '${command}' is not in the trusted PATH (${trustedPath}). Give its absolute path, or add its directory to "path" in servers.json if you trust everything in it.`,
  );
}

/** Resolves a file argument (a script) without requiring it to be executable. */
export function resolveFileArg(file: string, cwd: string | undefined, what: string): ResolvedFile {
  if (!path.isAbsolute(file) && !cwd) {
    throw new WardenError('COMMAND_NOT_FOUND', `${what} '${file}' is a relative path and no cwd is set; give an absolute path or set cwd.`);
  }
  const abs = path.resolve(cwd ?? '/', file);
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch {
    throw new WardenError('COMMAND_NOT_FOUND', `${what} ${abs} does not exist.`);
  }
  if (!st.isFile()) throw new WardenError('COMMAND_NOT_FOUND', `${what} ${abs} is not a regular file.`);
  return followChain(abs);
}

function isExecutableFile(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Follows symlinks hop by hop from an absolute path, recording each. */
export function followChain(start: string): ResolvedFile {
  const chain = [start];
  let current = start;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const st = fs.lstatSync(current);
    if (!st.isSymbolicLink()) break;
    current = path.resolve(path.dirname(current), fs.readlinkSync(current));
    chain.push(current);
  }
  const real = fs.realpathSync(current);
  if (chain[chain.length - 1] !== real) chain.push(real);
  return { requested: start, chain, realpath: real };
}
