import fs from 'node:fs';
import path from 'node:path';
import { makingDir, nameOf, publish, published } from './run-scratch.js';
import { NODE, ROOT, SERVERS, addServer, cli } from './warden.js';

// A node binary's entry of the digest cache, made once per test run and node, for tests that enroll a server of
// their own in a fresh home with that node (addServer does it for the node running the tests and those of
// test/nodes; the module guard's tests, on each node release): `add` digests the node of the command line (100+
// MB, ~0.12 CPU-s of an add's ~0.85 with the node running the tests) into the home's cache of that server. The entry is
// the one `add` wrote in a home of the run's scratch directory (test/helpers/run-scratch.ts) that enrolled
// test/servers/basic.mjs with that node, so it holds what the warden itself digested, keyed as it keys it (by
// the file's device, inode, size and times: a binary changed since is digested again). The test's home gets it
// before its `add`, as a home that had enrolled a server with that node before would hold it, with the release
// that home read from that node's bytes (cache/node-releases.json, by the binary's sha256; ~0.3 s a read,
// docs/adr/0058), which only a node other than the warden's own has; everything else (the server's script and
// package, the modules it loads) is digested by that `add` as before.

/** The cache directory of a home that enrolled basic.mjs with `node` (made at its first use in the run). */
function warmedCache(node: string): string {
  const key = `warm-digest-${nameOf(node)}`;
  let dir = published(key);
  if (!dir) {
    const fresh = makingDir('warm-digest');
    // cli, not addServer: addServer warms the node first, from this very template.
    const r = cli(path.join(fresh, 'home'), ['add', 'warm', '--yes', '--', node, path.join(SERVERS, 'basic.mjs')]);
    if (r.code !== 0) throw new Error(`add of the digest template with ${node} failed (${r.code}): ${r.stderr}${r.stdout}`);
    dir = publish(fresh, key);
  }
  return path.join(dir, 'home/cache');
}

/** A copy, at `home` (which must not exist yet), of the home the digest template was made in: server 'warm' is
 *  test/servers/basic.mjs enrolled with `node`, as an `add` would have enrolled it, for a test that only runs it. */
export function copyOfWarmHome(node: string, home: string): void {
  fs.cpSync(path.dirname(warmedCache(node)), home, { recursive: true, errorOnExist: true, force: false, preserveTimestamps: true });
}

/** Puts `node`'s digest cache entry into `home`'s cache of server `id` (which must not exist yet), and the release
 *  read from it into the home's node-releases.json (made unless it exists); `add` of `id` with `node` in `home`
 *  then finds both. */
export function warmNodeDigest(home: string, id: string, node: string): void {
  const file = path.join(home, 'cache', `digests.${id}.json`);
  if (fs.existsSync(file)) throw new Error(`${file} exists: warmNodeDigest is for a server not enrolled yet`);
  const st = fs.statSync(node);
  const inode = `${st.dev}:${st.ino}`;
  const warmed = warmedCache(node);
  const cache = JSON.parse(fs.readFileSync(path.join(warmed, 'digests.warm.json'), 'utf8')) as { version: number; entries: Record<string, string> };
  const entry = cache.entries[inode];
  if (entry === undefined) throw new Error(`the warmed digest cache of ${node} has no entry for its inode ${inode}`);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, JSON.stringify({ ...cache, entries: { [inode]: entry } }), { mode: 0o600, flag: 'wx' });
  const releases = path.join(warmed, 'node-releases.json');
  if (fs.existsSync(releases) && !fs.existsSync(path.join(home, 'cache/node-releases.json'))) fs.copyFileSync(releases, path.join(home, 'cache/node-releases.json'));
}

/** Whether addServer warms `program`: the node running the tests or one of test/nodes, files no test changes. */
export function warmedByAdd(program: string | undefined): boolean {
  return program === NODE || (program !== undefined && program.startsWith(path.join(ROOT, 'test/nodes/node_modules') + path.sep));
}

/** warmNodeDigest, unless `home` already has a digest cache of server `id` (an add again of the same id). */
export function warmUnlessCached(home: string, id: string, node: string): void {
  if (!fs.existsSync(path.join(home, 'cache', `digests.${id}.json`))) warmNodeDigest(home, id, node);
}

/** addServer with `commandLine[0]` (a node binary) warmed first (warmNodeDigest), for a node addServer does not warm. */
export function addServerWarm(home: string, id: string, commandLine: string[], flags: string[] = []): ReturnType<typeof addServer> {
  warmNodeDigest(home, id, commandLine[0] as string);
  return addServer(home, id, commandLine, flags);
}
