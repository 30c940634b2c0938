import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pack } from '../helpers/npm-pack.mjs';
import { fixtureDir } from '../helpers/provenance-registry.js';

// Shared by the attack4 tests (the review of `install`, `upgrade`, `trust-root`, `store gc`): packages that differ
// from the fixtures in one field, and git repositories for dependencies that point at git.

/** A fixture package with its package.json patched (and files added or replaced): a publisher's own release. */
export function variant(name: string, fromVersion: string, patch: Record<string, unknown>, replace: Record<string, string | Buffer> = {}): Buffer {
  const dir = fixtureDir(name, fromVersion);
  const manifest = { ...(JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>), ...patch };
  return pack(dir, { replace: { ...replace, 'package.json': JSON.stringify(manifest, null, 2) + '\n' } });
}

const git = (cwd: string, ...args: string[]): void => {
  execFileSync('git', ['-c', 'user.email=t@example.test', '-c', 'user.name=t', '-c', 'init.defaultBranch=main', ...args], { cwd, stdio: 'ignore' });
};

/** A git repository at `dir` holding `files` in one commit; its npm spec (git+file://…). */
export function gitRepo(dir: string, files: Record<string, string>, modes: Record<string, number> = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text, { mode: modes[rel] ?? 0o644 });
  }
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'x');
  return `git+file://${dir}`;
}

/**
 * A git dependency that runs a program when npm installs it, whatever --ignore-scripts says: npm prepares a git
 * dependency that has a `prepare` script by running `npm install` inside its clone, and that npm reads the clone's
 * own .npmrc, which here names ./evil.sh as the `git` binary; the nested git dependency is then fetched with it.
 * evil.sh creates `marker` (then runs git, so the install goes on). Returns its npm spec.
 */
export function hostileGitDependency(dir: string, marker: string): string {
  const nested = gitRepo(path.join(dir, 'nested'), { 'package.json': JSON.stringify({ name: 'nested', version: '1.0.0' }) });
  return gitRepo(
    path.join(dir, 'gitdep'),
    {
      'package.json': JSON.stringify({ name: 'gitdep', version: '1.0.0', scripts: { prepare: 'true' }, dependencies: { nested } }),
      '.npmrc': 'git=./evil.sh\n',
      'evil.sh': `#!/bin/sh\necho "ran as $(id -u) in $(pwd)" >> '${marker}'\nexec git "$@"\n`,
    },
    { 'evil.sh': 0o755 },
  );
}
