import path from 'node:path';
import type { ResolvedLaunch } from '../attest/plan.js';
import { findPackageRoot } from '../attest/tree.js';
import { MARKER_ENV } from '../launch/marker.js';
import { INSTALL_ROOT, PRELOAD_DIR } from '../launch/module-guard.js';
import type { HomePaths } from '../store/paths.js';
import type { ServerConfig } from '../store/servers.js';
import type { EngineLookup } from './engine.js';
import { realDir } from './observe.js';

// What an enrollment launch's observation (sandbox/observe.ts, docs/adr/0063-observed-enrollment.md) knows of
// the server before it starts: where its code is (kept real over the overlays) and which paths its configuration
// names (written for real).

export interface ObserveContext {
  wardenHome: string;
  userHome: string | undefined;
  cwd: string;
  trustedPath: string;
  /** Where the helpers (unshare, sh, mount, umount) are looked up: the trusted path less what a server may write. */
  lookup: EngineLookup;
  /** What the server's code is: its executable and chain, its script, the module guard, the warden's install. */
  code: string[];
  /** Paths its configuration names (env values, arguments other than its code, cwd): written for real. */
  named: string[];
  /** Its executable and chain (files), and the trees code may be loaded from whole (the package store, the
   *  warden's install): bound back over an overlay that holds them, so their inodes stay the attested ones. */
  codeRoots: string[];
}

/** What an enrollment launch's observation knows before the server starts (its plan may not be complete: ADR 0019). */
export function observeContext(paths: HomePaths, lookup: EngineLookup, env: Record<string, string>, server: ServerConfig, resolved: ResolvedLaunch): ObserveContext {
  // The executable's own non-system libraries are code too: an overlay would show them on another device.
  const exe = [resolved.file, ...resolved.executable.chain, ...resolved.libraries.flatMap((l) => [l.path, ...l.chain])];
  const scriptRoots = resolved.script ? codeDirsOf(resolved.script.realpath, resolved.node) : [];
  return {
    wardenHome: paths.home,
    userHome: env.HOME,
    cwd: server.cwd ?? process.cwd(),
    trustedPath: lookup.path,
    lookup,
    code: [...exe, ...(resolved.script ? [resolved.script.realpath] : []), ...scriptRoots.slice(1), PRELOAD_DIR, INSTALL_ROOT, ...(server.modules ?? [])],
    named: [...Object.entries(env).filter(([k]) => !['PATH', 'HOME', 'TMPDIR', MARKER_ENV].includes(k)).map(([, v]) => v), ...resolved.args, ...(server.cwd ? [server.cwd] : [])],
    codeRoots: [...exe, paths.storeDir, INSTALL_ROOT, ...scriptRoots],
  };
}

/** Where a script's code is loaded from, bound back whole over an overlay that holds them: for node, its package
 *  (the nearest package.json above it, else its directory) and the node_modules directory of each directory above
 *  that (node looks a bare name up in each); for another interpreter, its directory. A root that is the overlaid
 *  directory itself (a script at the home's top, a package.json there) still leaves that directory unobserved. */
function codeDirsOf(script: string, node: boolean): string[] {
  const root = (node ? findPackageRoot(path.dirname(script)) : undefined) ?? path.dirname(script);
  if (!node) return [root];
  const modules: string[] = [];
  for (let dir = path.dirname(root); ; dir = path.dirname(dir)) {
    const nm = path.join(dir, 'node_modules');
    if (realDir(nm) === nm) modules.push(nm);
    if (dir === path.dirname(dir)) break;
  }
  return [root, ...modules];
}

