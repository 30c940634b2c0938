// Brings bubblewrap, which the confined servers of test/sandbox/ run under, onto a fresh Debian machine: the warden
// runs the system's bwrap from its trusted path (never a copy the tests fetched, which it would have to trust), so
// it is installed, not downloaded. Run by `pretest` (docs/testing.md). Nothing to do when /usr/bin/bwrap or
// /bin/bwrap is there. As root with apt-get: `apt-get install bubblewrap` (after `apt-get update` when the package
// lists are empty, as in a new container; scripts/apt-install.mjs). Anyone else is told what to install, and the
// step fails.
import fs from 'node:fs';
import { aptInstall } from './apt-install.mjs';

if (['/usr/bin/bwrap', '/bin/bwrap'].some((f) => fs.existsSync(f))) process.exit(0);
/** @type {(why: string) => never} */
const stop = (why) => {
  console.error(`scripts/test-bwrap.mjs: ${why} test/sandbox/ needs bubblewrap (bwrap) on the trusted path: install it (apt-get install bubblewrap) and run npm test again.`);
  process.exit(1);
};
aptInstall({ script: 'scripts/test-bwrap.mjs', pkg: 'bubblewrap', tool: 'bwrap', binary: '/usr/bin/bwrap', installed: () => fs.existsSync('/usr/bin/bwrap'), purpose: 'test/sandbox/', stop });
