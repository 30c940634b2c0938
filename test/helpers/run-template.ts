import fs from 'node:fs';
import path from 'node:path';
import { makingDir, nameOf, publish, published } from './run-scratch.js';
import { NODE, SERVERS, addServer, tempDir } from './warden.js';

// A test directory (a home and the files its servers.json names: a scenario, a log) made once per test run by
// the same commands a test would run, then copied for each test that asks for it: for helpers whose every call
// enrolls the same server from the same scenario (`add` launches the server up to three times and digests the
// node binary, most of such a test's time). The template is made in the run's scratch directory
// (test/helpers/run-scratch.ts) and never used itself. A home names no path inside itself (the trust files name
// the server's files, the digest cache their inodes), so a copy is a home like the one the commands would have
// made there; what servers.json names in the template's directory (an `add --env` of a scenario or log file) is
// made to name the copy's, as `add` would have written it there: servers.json is the only file of a home that
// holds such a path. The server's own files are shared, so a template is only for servers kept in the checkout
// (test/servers/), which no test changes.

/** A copy, in `to` (a fresh temporary directory unless given; what it holds stays), of the directory `make` filled
 *  at the first call of the run with this `key`, the servers.json of each home* directory in it naming the copy; `made` is what
 *  `make` returned (as JSON). */
export function copyOfRunTemplate<T>(key: string, make: (dir: string) => T, to: string = tempDir()): { dir: string; made: T } {
  const name = `dir-${nameOf(key)}`;
  let template = published(name);
  if (!template) {
    const fresh = makingDir('dir');
    const result = make(fresh);
    fs.writeFileSync(path.join(fresh, '.made.json'), JSON.stringify(result ?? null));
    template = publish(fresh, name);
  }
  const made = JSON.parse(fs.readFileSync(path.join(template, '.made.json'), 'utf8')) as T;
  // entry by entry: node 24's cpSync refuses to copy a directory into an existing one (EEXIST), node 20's merges
  for (const entry of fs.readdirSync(template)) {
    if (entry !== '.made.json') fs.cpSync(path.join(template, entry), path.join(to, entry), { recursive: true, preserveTimestamps: true, errorOnExist: true, force: false });
  }
  for (const entry of fs.readdirSync(template)) {
    const servers = path.join(to, entry, 'servers.json');
    if (!entry.startsWith('home') || !fs.existsSync(servers)) continue;
    fs.writeFileSync(servers, fs.readFileSync(servers, 'utf8').replaceAll(`${template}/`, `${to}/`));
  }
  return { dir: to, made };
}

/** `home` (absent, or an empty directory) as `adds` (addServer calls into the home it is given) leave it: made once
 *  per run and `key` in the run's scratch directory, then copied with its modes and times (a home names no path
 *  inside itself). The adds must name only files of the checkout or the system, which no test changes. */
function addedOnce(key: string, home: string, adds: (home: string) => void): string {
  const name = `added-home-${nameOf(key)}`;
  let template = published(name);
  if (!template) {
    const fresh = makingDir('added-home');
    adds(path.join(fresh, 'home'));
    template = publish(fresh, name);
  }
  if (fs.existsSync(home)) fs.rmdirSync(home); // an empty directory only (node 24's cpSync refuses to copy into one)
  fs.cpSync(path.join(template, 'home'), home, { recursive: true, preserveTimestamps: true, errorOnExist: true, force: false });
  return home;
}

/** `home` as `addServer(home, id, commandLine)` leaves it (addedOnce): for a test whose home starts with that one
 *  server enrolled. */
export function addedHome(home: string, id: string, commandLine: string[]): string {
  return addedOnce(JSON.stringify([id, commandLine]), home, (h) => addServer(h, id, commandLine));
}

/** addedHome of test/servers/basic.mjs, run with the node running the tests. */
export function basicHome(home: string, id = 'basic'): string {
  return addedHome(home, id, [NODE, path.join(SERVERS, 'basic.mjs')]);
}

/** A fresh home (a temporary directory) with two one-file servers enrolled: 'one' (basic.mjs) and 'two' (noisy.mjs). */
export function homeWithTwoServers(): string {
  return addedOnce(`two servers ${NODE}`, tempDir(), (h) => {
    addServer(h, 'one', [NODE, path.join(SERVERS, 'basic.mjs')]);
    addServer(h, 'two', [NODE, path.join(SERVERS, 'noisy.mjs')]);
  });
}
