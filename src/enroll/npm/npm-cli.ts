import semver from 'semver';
import { WardenError } from '../../error.js';
import { escaped } from '../../escape.js';

// Every npm the warden runs, with the flags that leave it no source but registry tarballs
// (docs/adr/0043-npm-takes-registry-tarballs-only.md): no git, no URL, no file, no directory dependency is fetched,
// cloned or prepared, whatever a packument, a lockfile or a package's .npmrc asks; no install script runs; the
// lockfile records each package's registry tarball URL (which the lockfile check then compares). These are command
// line flags, the highest-priority layer of npm's configuration: no .npmrc and no npm_config_* variable overrides
// them. npm before 11.14.0 has no allow-file, allow-remote or allow-directory and would ignore them unsaid: refused.

export const NPM_FLAGS = [
  '--allow-git=none',
  '--allow-remote=none',
  '--allow-file=none',
  '--allow-directory=none',
  '--ignore-scripts',
  '--omit=dev',
  '--omit-lockfile-registry-resolved=false',
  '--no-audit',
  '--no-fund',
  '--install-links=false',
  '--loglevel=error',
];

/** The first npm with all four allow-* settings (allow-file, allow-remote and allow-directory came in 11.14.0). */
export const MIN_NPM = '11.14.0';

let checked: Promise<void> | undefined;

/** Refuses an npm that would ignore NPM_FLAGS' allow-* settings. */
async function checkNpmVersion(): Promise<void> {
  const { execa } = await import('execa');
  const r = await execa('npm', ['--version'], { reject: false, timeout: 60_000, stdin: 'ignore' });
  const version = semver.valid(`${r.stdout}`.trim());
  if (r.exitCode !== 0 || !version) {
    throw new WardenError('NPM_UNSUPPORTED', `could not ask npm its version (npm --version: ${r.exitCode !== 0 ? `exit ${r.exitCode}` : `'${`${r.stdout}`.trim().slice(0, 40)}'`}). Check that npm ${MIN_NPM} or later is installed; nothing was installed.`);
  }
  if (semver.lt(version, MIN_NPM)) {
    throw new WardenError('NPM_UNSUPPORTED', `npm ${version} cannot be told to take packages from registry tarballs only (its allow-git, allow-remote, allow-file and allow-directory settings came in npm ${MIN_NPM}); nothing was installed. Install a newer npm (npm install -g npm@11) and try again.`);
  }
}

/** Starts asking npm its version, so that the answer is there when npm is first run (a candidate is fetched and
 *  verified meanwhile); a refusal is reported by runNpm, not here. */
export function prepareNpm(): void {
  checked ??= checkNpmVersion();
  checked.catch(() => undefined);
}

/** What npm refused to fetch, from its `npm error code EALLOW<TYPE>` lines, or undefined. */
function refusedSource(stderr: string): { type: string; what: string } | undefined {
  const code = /npm error code EALLOW(GIT|REMOTE|FILE|DIRECTORY)\b/.exec(stderr);
  if (!code) return undefined;
  const what = /Refusing to fetch "([^"\n]{1,300})"/.exec(stderr)?.[1] ?? 'a dependency';
  return { type: (code[1] as string).toLowerCase(), what };
}

/** Runs npm in `dir` with NPM_FLAGS; a refusal to fetch a non-registry source is NPM_SOURCE_REFUSED, any other
 *  failure INSTALL_FAILED with npm's last lines. `label` names the package (name@version). */
export async function runNpm(dir: string, label: string, args: string[]): Promise<void> {
  prepareNpm();
  try {
    await checked;
  } catch (err) {
    checked = undefined;
    throw err;
  }
  const { execa } = await import('execa');
  const r = await execa('npm', [...args, ...NPM_FLAGS], { cwd: dir, reject: false, timeout: 600_000, stdin: 'ignore' });
  if (r.exitCode === 0 && !r.timedOut) return;
  const refused = refusedSource(`${r.stderr}`);
  if (refused) {
    // npm 11.19 says EALLOWREMOTE, naming nothing, of a registry package with bundleDependencies too (npm/cli#9800).
    const bundled = refused.type === 'remote' && refused.what === 'a dependency' ? ' (npm also says this of a registry package that bundles its dependencies, which it cannot resolve under --allow-remote=none: npm/cli#9800)' : '';
    throw new WardenError('NPM_SOURCE_REFUSED', `npm ${args[0]} of ${label} would fetch ${escaped(refused.what)}, a ${refused.type} dependency, which is not a registry tarball pinned by integrity${bundled}; npm was stopped before fetching it and nothing was installed. The registry's package document (or the lockfile) names it: do not install this version.`);
  }
  const tail = `${r.stderr}`.trim().split('\n').slice(-3).join(' ');
  throw new WardenError('INSTALL_FAILED', `npm ${args[0]} of ${label} failed${r.timedOut ? ' (timed out after 10 minutes)' : ''}: ${escaped(tail) || `exit ${r.exitCode}`}. Nothing was installed.`);
}
