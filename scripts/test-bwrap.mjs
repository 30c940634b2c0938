// Brings bubblewrap, which the confined servers of test/sandbox/ run under, onto a fresh Debian machine: the warden
// runs the system's bwrap from its trusted path (never a copy the tests fetched, which it would have to trust), so
// it is installed, not downloaded. Run by `pretest` (docs/testing.md). Nothing to do when /usr/bin/bwrap or
// /bin/bwrap is there. As root with apt-get: `apt-get install bubblewrap` (after `apt-get update` when the package
// lists are empty, as in a new container). Anyone else is told what to install, and the step fails.
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';

if (['/usr/bin/bwrap', '/bin/bwrap'].some((f) => fs.existsSync(f))) process.exit(0);
const stop = (why) => {
  console.error(`scripts/test-bwrap.mjs: ${why} test/sandbox/ needs bubblewrap (bwrap) on the trusted path: install it (apt-get install bubblewrap) and run npm test again.`);
  process.exit(1);
};
if (process.getuid?.() !== 0) stop('bwrap is missing and this is not root.');
if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) stop('bwrap is missing and apt-get is not available.');
console.error('scripts/test-bwrap.mjs: installing bubblewrap (apt-get install bubblewrap) for test/sandbox/');
const install = () => spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'bubblewrap'], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
if (install().status !== 0) {
  spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (install().status !== 0) stop('apt-get install bubblewrap failed.');
}
if (!fs.existsSync('/usr/bin/bwrap')) stop('apt-get installed bubblewrap, but /usr/bin/bwrap is not there.');
