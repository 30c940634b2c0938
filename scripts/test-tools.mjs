// Brings the host tools of test/deploy/prometheus.test.ts that a fresh Debian machine lacks: promtool (Debian
// package prometheus) and amtool (prometheus-alertmanager), which check the alerting rules and the Alertmanager
// example in deploy/. Run by `pretest`, so the test command gets them itself (docs/testing.md).
//
// A tool found on PATH is used as it is. Otherwise its Debian package is fetched with `apt-get download` (apt
// checks it against the signed package lists; no root needed) and only the tool's binary is taken out of it with
// `dpkg-deb -x` into test/tools/bin/, which the test looks in after PATH. Nothing is installed on the system. When
// apt's package lists are missing (a new container), root runs `apt-get update` first; anyone else is told to.
// Nothing to do when both tools are there.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test/tools/bin');
/** tool -> the Debian package that ships it as /usr/bin/<tool>. */
const TOOLS = { promtool: 'prometheus', amtool: 'prometheus-alertmanager' };

/** @param {string} cmd */
const runs = (cmd) => spawnSync(cmd, ['--version'], { stdio: 'ignore' }).status === 0;
const missing = Object.entries(TOOLS).filter(([tool]) => !runs(tool) && !runs(path.join(BIN, tool)));
if (missing.length === 0) process.exit(0);

class Failed extends Error {}
/** @type {(why: string) => never} */
const fail = (why) => {
  throw new Failed(why);
};
/** @type {(why: string) => never} */
const stop = (why) => {
  console.error(`scripts/test-tools.mjs: ${why} test/deploy/prometheus.test.ts needs ${missing.map(([t, p]) => `${t} (Debian package ${p})`).join(' and ')}: install them (apt-get install ${missing.map(([, p]) => p).join(' ')}), or fix the above and run npm test again.`);
  process.exit(1);
};
for (const cmd of ['apt-get', 'dpkg-deb']) if (spawnSync(cmd, ['--version'], { stdio: 'ignore' }).status !== 0) stop(`${cmd} is not available (this step takes the tools from Debian packages).`);

const packages = missing.map(([, pkg]) => pkg);
console.error(`scripts/test-tools.mjs: fetching ${packages.join(' and ')} from Debian for ${missing.map(([t]) => t).join(' and ')} (~30 MB, once) into test/tools/bin`);
let stopMessage = '';
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'warden-test-tools-'));
try {
  const download = () => spawnSync('apt-get', ['download', '-qq', ...packages], { cwd: work, encoding: 'utf8' });
  let got = download();
  if (got.status !== 0 && process.getuid?.() === 0) {
    // A container's package lists are often empty until the first update.
    spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'] }); // if it fails, the download says so
    got = download();
  }
  if (got.status !== 0) fail(`apt-get download ${packages.join(' ')} failed (${got.stderr.trim().split('\n').pop()}); if apt's package lists are missing, run 'apt-get update' as root.`);
  fs.mkdirSync(BIN, { recursive: true });
  for (const [tool, pkg] of missing) {
    const deb = fs.readdirSync(work).find((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'));
    if (!deb) fail(`apt-get download left no ${pkg}_*.deb.`);
    const tree = path.join(work, pkg);
    execFileSync('dpkg-deb', ['-x', path.join(work, deb), tree]);
    // Under a unique name, then one rename: a test never sees half a binary.
    const part = path.join(BIN, `.${tool}.${process.pid}`);
    fs.copyFileSync(path.join(tree, 'usr/bin', tool), part);
    fs.chmodSync(part, 0o755);
    fs.renameSync(part, path.join(BIN, tool));
    if (!runs(path.join(BIN, tool))) fail(`test/tools/bin/${tool} (from ${deb}) does not run here.`);
    console.error(`scripts/test-tools.mjs: test/tools/bin/${tool} from ${deb}`);
  }
} catch (err) {
  if (!(err instanceof Failed)) throw err;
  process.exitCode = 1;
  stopMessage = err.message;
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
if (stopMessage) stop(stopMessage);
