import fs from 'node:fs';
import path from 'node:path';
import { WardenError } from '../error.js';
import type { HomePaths } from '../store/paths.js';
import { checkTrusted } from '../store/perms.js';

// `import --install`: an entry that runs `npx -y <package>` is replaced by a copy of that package installed at
// the exact version the registry resolves now, into a directory the warden owns (<home>/packages/), then
// enrolled like any other server. Install scripts are not run (--ignore-scripts): what is enrolled is what the
// package's tarball holds, and nothing ran while it was fetched.

const PACKAGE_SPEC = /^((?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*)(?:@([^\s/@]+))?$/i;

export interface Installed {
  name: string;
  version: string;
  dir: string;
  /** The bin script npx would have run. */
  script: string;
}

async function npm(args: string[], cwd?: string): Promise<string> {
  const { execa } = await import('execa');
  const r = await execa('npm', args, { cwd, reject: false, timeout: 300_000, stdin: 'ignore' });
  if (r.exitCode !== 0 || r.timedOut) {
    const tail = `${r.stderr}`.trim().split('\n').slice(-3).join(' ');
    throw new WardenError('INSTALL_FAILED', `npm ${args.slice(0, 2).join(' ')} failed${r.timedOut ? ' (timed out after 5 minutes)' : ''}: ${tail || `exit ${r.exitCode}`}.`);
  }
  return `${r.stdout}`;
}

/** The script a package's `bin` names for npx: its only one, or the one named after the package. */
function binScript(pkgDir: string, name: string): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { bin?: string | Record<string, string> };
  const bins = typeof manifest.bin === 'string' ? { [name.split('/').pop() as string]: manifest.bin } : (manifest.bin ?? {});
  const entries = Object.entries(bins);
  const chosen = entries.length === 1 ? entries[0] : entries.find(([k]) => k === name.split('/').pop());
  if (!chosen) throw new WardenError('INSTALL_FAILED', `package ${name} has ${entries.length === 0 ? 'no bin script' : `several bin scripts (${entries.map(([k]) => k).join(', ')})`}, so which one npx ran is not clear; add it by hand with 'mcp-warden add'.`);
  return path.join(pkgDir, chosen[1]);
}

/** Resolves `spec` to one version and installs exactly that (or reuses an earlier install of it). */
export async function installPinned(paths: HomePaths, spec: string): Promise<Installed> {
  const m = PACKAGE_SPEC.exec(spec);
  if (!m) throw new WardenError('INSTALL_FAILED', `'${spec}' is not an npm package name with an optional version; install it by hand and add it with 'mcp-warden add'.`);
  const name = m[1] as string;
  const viewed = JSON.parse(await npm(['view', spec, 'version', '--json'])) as string | string[];
  const version = Array.isArray(viewed) ? viewed.at(-1) : viewed;
  if (!version) throw new WardenError('INSTALL_FAILED', `the registry has no version of ${spec}.`);
  const dir = path.join(paths.packagesDir, `${name.replace('/', '+')}@${version}`);
  const pkgDir = path.join(dir, 'node_modules', name);
  // An earlier install is reused and then trusted at enrollment: never one another user could have written.
  for (const [p, label] of [[paths.packagesDir, 'the packages directory'], [dir, `the install of ${name}@${version}`], [path.join(dir, 'node_modules'), `the install of ${name}@${version}`], [pkgDir, `the install of ${name}@${version}`]] as const) checkTrusted(p, label, 'file');
  const installedVersion = (): string | undefined => {
    try {
      return (JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version?: string }).version;
    } catch {
      return undefined;
    }
  };
  if (installedVersion() !== version) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    await npm(['install', '--prefix', dir, '--save-exact', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', `${name}@${version}`], dir);
    if (installedVersion() !== version) throw new WardenError('INSTALL_FAILED', `npm reported success but ${pkgDir} does not hold ${name}@${version}.`);
  }
  return { name, version, dir, script: binScript(pkgDir, name) };
}
