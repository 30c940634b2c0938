// Installs a Debian package that a part of the suite needs on the trusted path (`apt-get install`, after
// `apt-get update` when the package lists are empty, as in a new container), for the `pretest` steps that bring
// system tools the warden runs from where the system put them (never a copy the tests fetched): test-bwrap.mjs,
// test-bpftrace.mjs. Only root with apt-get can; anyone else meets the caller's `stop`, which says what to install.
import { spawnSync } from 'node:child_process';

/**
 * Installs `pkg` with apt-get as root, or calls `stop` with why it cannot.
 * @param {object} want
 * @param {string} want.script the script's path as its messages name it (scripts/test-bwrap.mjs)
 * @param {string} want.pkg the Debian package (bubblewrap)
 * @param {string} want.tool the program it brings, as the messages name it (bwrap)
 * @param {string} want.binary where the program is expected after the install (/usr/bin/bwrap)
 * @param {() => boolean} want.installed whether the program is there now
 * @param {string} want.purpose what needs it (test/sandbox/)
 * @param {(why: string) => never} want.stop prints why and what to do, and ends the step
 */
export function aptInstall({ script, pkg, tool, binary, installed, purpose, stop }) {
  if (process.getuid?.() !== 0) stop(`${tool} is missing and this is not root.`);
  if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) stop(`${tool} is missing and apt-get is not available.`);
  console.error(`${script}: installing ${pkg} (apt-get install ${pkg}) for ${purpose}`);
  const install = () => spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (install().status !== 0) {
    spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'] });
    if (install().status !== 0) stop(`apt-get install ${pkg} failed.`);
  }
  if (!installed()) stop(`apt-get installed ${pkg}, but ${binary} is not there.`);
}
