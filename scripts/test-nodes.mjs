// Installs the other node releases the module guard is tested on (test/nodes: node 22 and 24, whose in-thread
// loader hooks the guard uses; docs/adr/0032-in-thread-module-hooks.md) into test/nodes/node_modules, from its
// own lockfile (npm checks each tarball's integrity) and without bin links, so that neither shadows the `node`
// the project runs on. Run by `pretest`, so the test command brings them (~100 MB, once) and no install does: an
// install of the package, from the registry or from git, never downloads what only the tests use
// (docs/adr/0048-lean-package.md). Nothing to do when they are installed as locked.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test/nodes');

function installedAsLocked() {
  const lock = JSON.parse(fs.readFileSync(path.join(DIR, 'package-lock.json'), 'utf8'));
  return Object.entries(lock.packages)
    .filter(([where]) => where !== '')
    .every(([where, entry]) => {
      try {
        const pkg = JSON.parse(fs.readFileSync(path.join(DIR, where, 'package.json'), 'utf8'));
        return pkg.version === entry.version && fs.statSync(path.join(DIR, where, 'bin/node')).isFile();
      } catch {
        return false;
      }
    });
}

if (installedAsLocked()) process.exit(0);
if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(`scripts/test-nodes.mjs: the node releases in test/nodes are built for linux-x64, not ${process.platform}-${process.arch}; the module guard tests that use them will fail here.`);
  process.exit(0);
}
console.error('scripts/test-nodes.mjs: installing the node releases the module guard is tested on (test/nodes, ~100 MB)');
execFileSync('npm', ['ci', '--no-bin-links', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: DIR, stdio: 'inherit' });
