import fs from 'node:fs';
import path from 'node:path';
import { WardenError } from '../error.js';
import type { DigestCache } from './cache.js';
import { digestFileAsync } from './digest.js';
import { readElf } from './elf.js';
import { libraryArtifacts, type StartupObject } from './native.js';
import { interpreterFamily, refuseShebangNodeOptions, scriptIndex } from './interpreters.js';
import { refuseRegistryLaunchers } from './launchers.js';
import { refuseWrappers } from './wrappers.js';
import { findCommand, resolveFileArg, type ResolvedFile } from './resolve.js';
import { parseShebang } from './shebang.js';
import { sameKey, statKey, type StatKey } from './stat-key.js';
import { digestPackageTree, findPackageRoot, type PackageTree, type TreeListing } from './tree.js';

// From a command line in servers.json to what will run: the file to exec (always a realpath, so a symlink
// re-pointed after attestation changes nothing), its argv, and every artifact it depends on with its digest.

/** `module`: a file a node server loads from outside its package, recorded at enrollment (servers.json `modules`).
 *  `library`: a shared object an ELF executable loads that is not the system's (attest/native.ts). */
export const ARTIFACT_KINDS = ['executable', 'script', 'package', 'module', 'library'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

export interface Artifact {
  kind: ArtifactKind;
  /** Realpath (a directory for a package tree). */
  path: string;
  sha256: string;
  /** Symlink hops from the name as configured to the realpath. */
  chain: string[];
  /** Stat key at digest time (files only). */
  key?: StatKey;
  /** Number of files and packages digested (package trees only). */
  files?: number;
  packages?: number;
  /** Stat keys of everything in a package tree (not recorded anywhere; for the re-check after launch). */
  treeKeys?: Map<string, string>;
  /** The directories of a package tree, for watching (package trees only). */
  treeDirs?: string[];
  /** What a package tree's digest was computed from (kept when it is allowlisted, to name what changed). */
  treeListing?: TreeListing;
}

export interface LaunchPlan {
  serverId: string;
  /** The realpath of the executable the kernel will exec (an interpreter for scripts). */
  file: string;
  /** Arguments after argv[0]. */
  args: string[];
  /** argv[0] as the server expects to see it. */
  argv0: string;
  /** The executable first, its non-system libraries, then the script, package tree and recorded modules when there are any. */
  artifacts: Artifact[];
  /** The script's realpath when node runs a script (the launch then loads the module guard). */
  nodeScript?: string;
}

export interface CommandSpec {
  serverId: string;
  command: string;
  args: string[];
  cwd: string | undefined;
  trustedPath: string;
  /** Files a node server loads from outside its package, recorded at enrollment (absolute realpaths). */
  modules?: string[];
}

async function fileArtifact(kind: ArtifactKind, resolved: ResolvedFile, cache: DigestCache | undefined): Promise<Artifact> {
  const d = await digestFileAsync(resolved.realpath, cache);
  return { kind, path: resolved.realpath, sha256: d.sha256, chain: resolved.chain, key: d.key };
}

/** Package trees digested since the caller's last change event, by root: servers sharing a tree digest it once. */
export type TreeMemo = Map<string, PackageTree>;

function treeArtifact(script: string, cache: DigestCache | undefined, memo: TreeMemo | undefined): Artifact | undefined {
  const root = findPackageRoot(path.dirname(script));
  if (!root) return undefined;
  let tree = memo?.get(root);
  try {
    tree ??= digestPackageTree(root, cache);
  } catch (err) {
    if (err instanceof WardenError) throw err;
    // A tree the walk cannot read (a path past PATH_MAX, a directory it may not list) is a refusal like any
    // other: node may already be waiting at the gate, and the launch must be answered and audited.
    const e = err as NodeJS.ErrnoException;
    const where = e.path ? ` at ${e.path.length > 160 ? `${e.path.slice(0, 160)}…` : e.path}` : '';
    throw new WardenError('PACKAGE_TREE_INVALID', `the package tree of ${root} cannot be digested: ${e.code ?? e.message}${where}.`, { cause: err });
  }
  memo?.set(root, tree);
  return { kind: 'package', path: tree.root, sha256: tree.sha256, chain: [tree.root], files: tree.files, packages: tree.packages, treeKeys: tree.keys, treeDirs: tree.dirs, treeListing: tree.listing };
}

/** Digests the modules recorded for a node server; each must still be a regular file at that path. */
async function moduleArtifacts(spec: CommandSpec, cache: DigestCache | undefined): Promise<Artifact[]> {
  const out: Artifact[] = [];
  for (const p of spec.modules ?? []) {
    try {
      out.push(await fileArtifact('module', { requested: p, realpath: p, chain: [p] }, cache));
    } catch (err) {
      if (!(err instanceof WardenError)) throw err;
      throw new WardenError('ARTIFACT_CHANGED', `module ${p}, recorded for server '${spec.serverId}' when it was enrolled, cannot be attested: ${err.message} Restore it, or remove it from "modules" of '${spec.serverId}' in servers.json.`);
    }
  }
  return out;
}

/**
 * A server's command line resolved to what will run, with only the executable digested: enough to start a node
 * interpreter behind the module guard's gate while the script, package tree and modules are digested
 * (completePlan), which is what the guard waits for before any of them is loaded (docs/adr/0019-fast-launch.md).
 */
export interface ResolvedLaunch {
  serverId: string;
  file: string;
  args: string[];
  argv0: string;
  executable: Artifact;
  /** The executable's shared objects that are not the system's, digested (attest/native.ts). */
  libraries: Artifact[];
  /** Every object ld.so loads at start, the system's included: looked for in the process's mappings after spawn. */
  startup: StartupObject[];
  /** The script an interpreter runs (not digested yet). */
  script?: ResolvedFile;
  /** node runs the script: its package tree and recorded modules belong to the plan, and the guard applies. */
  node: boolean;
  /** node may be started behind the module guard's gate before the script is judged: every option it is
   *  started with loads nothing (a "#!" line giving node any other option is refused, NODE_OPTION_REFUSED). */
  gated: boolean;
  /** For a "#!" script: its stat key when its first line (node's options) was read; it must still have it
   *  when it is digested, so the options node runs with are those of the bytes that were judged. */
  headKey?: StatKey;
}

/** Resolves a server's command line and digests its executable. Throws WardenError on refusal. */
export async function resolveLaunch(spec: CommandSpec, cache?: DigestCache): Promise<ResolvedLaunch> {
  refuseRegistryLaunchers(spec.serverId, spec.command, spec.args);
  refuseWrappers(spec.serverId, spec.command, spec.args);
  const exe = findCommand(spec.command, spec.trustedPath, spec.cwd, `the command of server '${spec.serverId}'`);
  refuseWrappers(spec.serverId, spec.command, spec.args, exe.realpath);
  // Taken before the head is read: a "#!" script digested later with another key may have had another first line.
  const headKey = statKey(fs.statSync(exe.realpath, { bigint: true }));
  // An ELF's program and dynamic headers are read with its head, in the same open (a swap in between the two reads
  // would go unseen): the digest that follows must be of the same stat key.
  const { head, info: elf } = readElf(exe.realpath, 256);

  if (elf) {
    const executable = await fileArtifact('executable', exe, cache);
    const { libraries, startup } = await libraryArtifacts(executable, elf, cache);
    const family = interpreterFamily(exe.realpath, spec.command);
    if (!family) return { serverId: spec.serverId, file: exe.realpath, args: spec.args, argv0: spec.command, executable, libraries, startup, node: false, gated: false };
    // An interpreter runs its script as surely as a "#!" line would: the script is digested, and run at the
    // realpath that was digested (a name re-pointed later changes nothing; bash never searches PATH for it).
    const at = scriptIndex(family, spec.serverId, spec.command, spec.args);
    const script = resolveFileArg(spec.args[at] as string, spec.cwd, `the script of server '${spec.serverId}'`);
    const args = [...spec.args];
    args[at] = script.realpath;
    // The options before the script were checked by scriptIndex: for node, only options that load nothing.
    return { serverId: spec.serverId, file: exe.realpath, args, argv0: spec.command, executable, libraries, startup, script, node: family === 'node', gated: family === 'node' };
  }

  const shebang = parseShebang(head, exe.realpath);
  if (!shebang) {
    throw new WardenError('COMMAND_NOT_EXECUTABLE', `${exe.realpath} (the command of server '${spec.serverId}') is neither an ELF binary nor a "#!" script.`);
  }
  const interp = findCommand(shebang.interpreter, spec.trustedPath, undefined, `the interpreter of ${exe.realpath}`);
  const { info: interpElf } = readElf(interp.realpath, 4);
  if (!interpElf) {
    throw new WardenError('INTERPRETER_NOT_FOUND', `the interpreter ${interp.realpath} of ${exe.realpath} is not an ELF binary; a script interpreting a script is not supported.`);
  }
  const node = interpreterFamily(interp.realpath, shebang.interpreter) === 'node';
  if (node) refuseShebangNodeOptions(exe.realpath, shebang.args);
  const executable = await fileArtifact('executable', interp, cache);
  const { libraries, startup } = await libraryArtifacts(executable, interpElf, cache);
  return {
    serverId: spec.serverId,
    file: interp.realpath,
    args: [...shebang.args, exe.realpath, ...spec.args],
    argv0: shebang.interpreter,
    executable,
    libraries,
    startup,
    script: exe,
    node,
    gated: node,
    headKey,
  };
}

/** Digests the rest of a resolved launch: the script, and for node its package tree and recorded modules. */
export async function completePlan(resolved: ResolvedLaunch, spec: CommandSpec, cache?: DigestCache, memo?: TreeMemo): Promise<LaunchPlan> {
  const { serverId, file, args, argv0, script } = resolved;
  const artifacts = [resolved.executable, ...resolved.libraries];
  if (!script) return { serverId, file, args, argv0, artifacts };
  const scriptArtifact = await fileArtifact('script', script, cache);
  if (resolved.headKey && scriptArtifact.key && !sameKey(resolved.headKey, scriptArtifact.key)) {
    throw new WardenError('ARTIFACT_CHANGED', `${script.realpath} (the script of server '${serverId}') changed between the reading of its "#!" line and its digest; try again, and find out what is writing to it.`);
  }
  artifacts.push(scriptArtifact);
  if (!resolved.node) return { serverId, file, args, argv0, artifacts };
  const tree = treeArtifact(script.realpath, cache, memo);
  if (tree) artifacts.push(tree);
  artifacts.push(...(await moduleArtifacts(spec, cache)));
  return { serverId, file, args, argv0, artifacts, nodeScript: script.realpath };
}

/** Resolves and digests a server's command line into a launch plan. Throws WardenError on refusal. */
export async function planLaunch(spec: CommandSpec, cache?: DigestCache, memo?: TreeMemo): Promise<LaunchPlan> {
  return completePlan(await resolveLaunch(spec, cache), spec, cache, memo);
}
