import { describe, expect, it } from 'vitest';
import { IN_THREAD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { markerText, templateCall } from '../attack13/loader-session.js';
import { HOSTILE, libFile, plantedEntry } from './session.js';

// ATTACK (module guard, node's compile cache): module.enableCompileCache(dir) (node 22.1+; also NODE_COMPILE_CACHE,
// default dir under the shared tmpdir) makes node take a module's compiled code from a cache file in dir when its
// header matches the source's size and CRC32; V8 then accepts the code cache for any source of the same length.
// The guard checks the attested, unchanged file and passes, and the code that runs is the cache file's: code from
// a file outside the attested set, no eval, no changed file. Here the cache is planted before the launch (as
// another process sharing the dir could), and the server only enables the cache and imports its own module.
// On node 22 and 24 (node 20 has no compile cache).
// Asserts the secure behaviour: the cached code does not run (the guard refuses or disables the compile cache).

const tmp = perTestDirs();

describe.each(IN_THREAD_NODES)('a compile cache outside the attested set, on %s', (_label, node) => {
  it('does not run code from a planted compile cache entry for an attested, unchanged module', async () => {
    const { cache, marker } = plantedEntry(tmp.dir, HOSTILE, node, libFile('innocent.mjs'));
    const r = await templateCall(tmp.home, node, HOSTILE, 'compilecache', { dir: cache });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('greeting hi');
  });
});
