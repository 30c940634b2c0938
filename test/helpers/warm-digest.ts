import fs from 'node:fs';
import path from 'node:path';
import { makingDir, nameOf, publish, published } from './run-scratch.js';
import { SERVERS, addServer } from './warden.js';

// A node binary's entry of the digest cache, made once per test run and node, for tests that enroll a server of
// their own in a fresh home with that node (the module guard's tests, on each node release): `add` digests the
// node of the command line (100+ MB, up to a second per test) into the home's cache of that server. The entry is
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
    addServer(path.join(fresh, 'home'), 'warm', [node, path.join(SERVERS, 'basic.mjs')]);
    dir = publish(fresh, key);
  }
  return path.join(dir, 'home/cache');
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

/** addServer with `commandLine[0]` (a node binary) warmed first (warmNodeDigest). */
export function addServerWarm(home: string, id: string, commandLine: string[], flags: string[] = []): ReturnType<typeof addServer> {
  warmNodeDigest(home, id, commandLine[0] as string);
  return addServer(home, id, commandLine, flags);
}
