import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IN_THREAD_NODES } from '../helpers/nodes.js';
import { ROOT, perTestDirs } from '../helpers/warden.js';
import { layoutServerPackage, loaderTemplate, markerText, outsideEsm, templateCall } from '../attack13/loader-session.js';
import { libFile, plantedEntry } from '../attack14/session.js';

// ATTACK (module guard, node's compile cache, worker threads): the guard keeps module.enableCompileCache off in a
// server (loaders.ts keepCompileCacheOff) and refuses a worker whose env or execArgv differs in
// NODE_COMPILE_CACHE (workers.ts), but only when the worker is given an env or an execArgv. A worker started with
// no options (or options naming neither) gets a copy of process.env as it is now, and node enables the compile
// cache of the worker's environment from NODE_COMPILE_CACHE there, before the preload runs in it (node's own
// documented way to give workers the cache). So an attested server that sets process.env.NODE_COMPILE_CACHE and
// starts a worker of its own package runs, in that worker, the code of a planted cache entry for its attested,
// unchanged module (the entry made as test/attack14 makes it: another source of the same length, header patched
// to the module's size and CRC32). On node 22 and 24 (node 20 has no compile cache).
// The same road takes the guard itself out of the worker: an entry planted for the preload (dist/launch/preload/
// preload.js, whose digest the warden checks before each launch) runs in its place, and the worker then imports a
// file from outside the package.
// Asserts the secure behaviour: the cached code does not run (refused, or the cache kept off in the worker).

const tmp = perTestDirs();

const WORKER_CACHE = loaderTemplate('attack31-worker-cache', (dir) =>
  layoutServerPackage(dir, {
    name: 'attack31-worker-cache',
    server: 'attack31/worker-cache.mjs',
    copies: { 'lib/innocent.mjs': 'attack14/innocent.mjs', 'lib/greeting-worker.mjs': 'attack31/greeting-worker.mjs', 'lib/load-worker.mjs': 'attack31/load-worker.mjs', 'lib/noop-hooks.mjs': 'attack31/noop-hooks.mjs' },
  }),
);

describe.each(IN_THREAD_NODES)('a compile cache named in process.env and inherited by a worker thread, on %s', (_label, node) => {
  for (const [how, args] of [
    ['with no options', {}],
    ['with options naming neither env nor execArgv', { workerData: 1 }],
  ] as const) {
    it(`does not run code from a planted compile cache entry in a worker started ${how}`, async () => {
      const { cache, marker } = plantedEntry(tmp.dir, WORKER_CACHE, node, libFile('innocent.mjs'));
      const r = await templateCall(tmp.home, node, WORKER_CACHE, 'workercache', { dir: cache, ...args });
      expect(markerText(marker)).toBe('');
      expect(r.answer).not.toContain('greeting hi');
    });
  }

  // The check of a SHARE_ENV worker reads process.env when the worker is constructed; node reads the shared
  // environment when the worker's thread makes its environment, later. The server sets the variable in between
  // (the line after the constructor: a race the server wins as long as a thread takes longer to start than one
  // statement takes to run).
  it('does not run code from a planted compile cache entry in a SHARE_ENV worker whose variable is set after it was constructed', async () => {
    const { cache, marker } = plantedEntry(tmp.dir, WORKER_CACHE, node, libFile('innocent.mjs'));
    const r = await templateCall(tmp.home, node, WORKER_CACHE, 'sharedafter', { dir: cache });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('greeting hi');
  });

  // node's own loader-hooks thread (module.register) is a worker no constructor of the guard's sees: node gives it
  // a copy of process.env, and it loads the server's hooks module there. The planted entry is the hooks module's,
  // whose code cannot change the answer: the marker says whether it ran; the answer, that the server ran on with
  // the cache kept off (the hooks registered, the module imported from its source), the outcome the header admits.
  it('does not run code from a planted compile cache entry for an attested hooks module that module.register loads on the hooks thread', async () => {
    const { cache, marker } = plantedEntry(tmp.dir, WORKER_CACHE, node, libFile('noop-hooks.mjs'));
    const r = await templateCall(tmp.home, node, WORKER_CACHE, 'registercache', { dir: cache });
    expect(markerText(marker)).toBe('');
    expect(r.answer).toContain('registered; greeting hello');
  });

  it("does not run a planted compile cache entry in place of the module guard's preload in a worker, nor a file from outside the package", async () => {
    const loadedMarker = path.join(tmp.dir, 'loaded-marker');
    const { cache, marker } = plantedEntry(tmp.dir, WORKER_CACHE, node, () => path.join(ROOT, 'dist/launch/preload/preload.js'));
    const outside = outsideEsm(path.join(tmp.dir, 'outside/outside.mjs'), loadedMarker);
    const r = await templateCall(tmp.home, node, WORKER_CACHE, 'workerload', { dir: cache, path: outside });
    // soft: each of the three is its own road, and a failure reports all three
    expect.soft(markerText(marker)).toBe('');
    expect.soft(markerText(loadedMarker)).toBe('');
    expect.soft(r.answer).not.toContain('worker imported outside');
  });
});
