import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES, IN_THREAD_NODES } from '../helpers/nodes.js';
import { ROOT, perTestDirs } from '../helpers/warden.js';
import { layoutServerPackage, loaderTemplate, markerText, outsideCjs, templateCall } from '../attack13/loader-session.js';
import { libFile, plantedEntry } from '../attack14/session.js';

// ATTACK (module guard, node's compile cache, the environment a thread is made from): neighbours of
// worker-compile-cache.test.ts. node enables a thread's compile cache from NODE_COMPILE_CACHE in the environment it
// makes the thread from (a copy of the creating thread's environment store when the worker has no env option; the
// store itself with SHARE_ENV), before the module guard's preload runs there. The store is written by more than
// `process.env.X = …` in the main thread: process.loadEnvFile (node writes the store itself),
// Object.defineProperty on process.env, process.env of a worker thread or of node's loader-hooks thread; and what
// the server's code reads as process.env need not be the store at all (process.env replaced by another object).
// Each road puts a compile cache directory holding a planted entry for the package's attested, unchanged
// lib/innocent.mjs (made as test/attack14 makes it) into such an environment, then starts a worker that imports it.
// On node 22 and 24 (node 20 has no compile cache).
// Asserts the secure behaviour: the cached code does not run, and the worker imports the module from its source.
// The last two tests: NODE_OPTIONS read by node from the store, not from what process.env names (node 20, 22, 24),
// and a server using worker threads in the ordinary ways keeps working (node 20, 22, 24).

const tmp = perTestDirs();

const ENV_ROADS = loaderTemplate('attack31-env-roads', (dir) =>
  layoutServerPackage(dir, {
    name: 'attack31-env-roads',
    server: 'attack31/env-roads.mjs',
    copies: {
      'lib/innocent.mjs': 'attack14/innocent.mjs',
      'lib/greeting-worker.mjs': 'attack31/greeting-worker.mjs',
      'lib/nest-worker.mjs': 'attack31/nest-worker.mjs',
      'lib/worker-hooks.mjs': 'attack31/worker-hooks.mjs',
      'lib/env-worker.mjs': 'attack31/env-worker.mjs',
      'lib/enable-worker.mjs': 'attack31/enable-worker.mjs',
    },
  }),
);

/** Enrolls ENV_ROADS with `node` and plants a compile cache entry for its lib/innocent.mjs (or for the module
 *  guard's preload); returns the cache directory and the marker the planted code would write. */
function planted(node: string, target: 'innocent' | 'preload' = 'innocent'): { cache: string; marker: string } {
  return plantedEntry(tmp.dir, ENV_ROADS, node, target === 'innocent' ? libFile('innocent.mjs') : () => path.join(ROOT, 'dist/launch/preload/preload.js'));
}

describe.each(IN_THREAD_NODES)('a compile cache reaching the environment of a worker thread by another road, on %s', (_label, node) => {
  it('does not run code from a planted compile cache entry named by an .env file the server loads with process.loadEnvFile', async () => {
    const { cache, marker } = planted(node);
    const file = path.join(tmp.dir, 'elsewhere/cache.env');
    fs.writeFileSync(file, `NODE_COMPILE_CACHE=${cache}\n`);
    const r = await templateCall(tmp.home, node, ENV_ROADS, 'envfile', { file });
    expect(markerText(marker)).toBe('');
    expect(r.answer).toContain('greeting hello');
  });

  // node's store of the process environment (the main thread's, and SHARE_ENV workers') hands a name to setenv(3),
  // which reads it up to its first NUL: another name to JavaScript, NODE_COMPILE_CACHE to node. Written after a
  // SHARE_ENV worker was constructed (as in worker-compile-cache.test.ts), before its thread reads the store. The
  // entry is planted for the preload, which would otherwise see the variable in the worker and end the server.
  it('does not run code from a planted compile cache entry named in process.env by a name that goes on past a NUL', async () => {
    const { cache, marker } = planted(node, 'preload');
    const r = await templateCall(tmp.home, node, ENV_ROADS, 'nulkey', { dir: cache, suffix: 'x' });
    expect(markerText(marker)).toBe('');
    expect(r.answer).toContain('greeting hello');
  });

  it('does not run code from a planted compile cache entry named in an .env file by a name that goes on past a NUL', async () => {
    const { cache, marker } = planted(node, 'preload');
    const file = path.join(tmp.dir, 'elsewhere/cache.env');
    fs.writeFileSync(file, `NODE_COMPILE_CACHE\0x=${cache}\n`);
    const r = await templateCall(tmp.home, node, ENV_ROADS, 'envfile', { file, shared: true });
    expect(markerText(marker)).toBe('');
    expect(r.answer).toContain('greeting hello');
  });

  it('does not run code from a planted compile cache entry named with Object.defineProperty on process.env', async () => {
    const { cache, marker } = planted(node);
    const r = await templateCall(tmp.home, node, ENV_ROADS, 'defineenv', { dir: cache });
    expect(markerText(marker)).toBe('');
    expect(r.answer).toContain('greeting hello');
  });

  it('does not run code from a planted compile cache entry left in the environment after the server replaced process.env', async () => {
    const { cache, marker } = planted(node);
    const r = await templateCall(tmp.home, node, ENV_ROADS, 'replacedenv', { dir: cache });
    expect(markerText(marker)).toBe('');
    expect(r.answer).toContain('greeting hello');
  });

  it('does not run code from a planted compile cache entry in a worker started by a worker that named the cache in its own process.env', async () => {
    const { cache, marker } = planted(node);
    const r = await templateCall(tmp.home, node, ENV_ROADS, 'nested', { dir: cache });
    expect(markerText(marker)).toBe('');
    expect(r.answer).toContain('greeting hello');
  });

  it("does not run code from a planted compile cache entry in a worker started on node's loader-hooks thread after the server's hooks named the cache there", async () => {
    const { cache, marker } = planted(node);
    const r = await templateCall(tmp.home, node, ENV_ROADS, 'hooksworker', { dir: cache });
    expect(markerText(marker)).toBe('');
    expect(r.answer).toContain('greeting hello');
  });

  // Not through the environment: node's own API, in a worker's thread (the main thread's: test/attack14).
  it('does not run code from a planted compile cache entry after a worker enabled the cache in its own thread with module.enableCompileCache', async () => {
    const { cache, marker } = planted(node);
    const r = await templateCall(tmp.home, node, ENV_ROADS, 'workerenable', { dir: cache });
    expect(markerText(marker)).toBe('');
    expect(r.answer).toContain('greeting hello (cache failed)');
  });
});

describe.each(GUARD_NODES)('the environment node makes a worker thread from, on %s', (_label, node) => {
  it('ends a server whose worker with an execArgv would get NODE_OPTIONS from the environment after process.env was replaced, before the --require file runs', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideCjs(path.join(tmp.dir, 'elsewhere/pre.cjs'), marker);
    const r = await templateCall(tmp.home, node, ENV_ROADS, 'nodeoptions', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('greeting');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('tried to load a worker thread with NODE_OPTIONS=');
  });

  it('lets a server use worker threads in the ordinary ways: no options, workerData, SHARE_ENV, an env object, its own execArgv, an .env file', async () => {
    const file = path.join(tmp.dir, 'elsewhere/ordinary.env');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'FROM_FILE=from the file\n');
    const r = await templateCall(tmp.home, node, ENV_ROADS, 'everyday', { file });
    expect(r.refused).toEqual([]);
    expect(r.answer).toContain('greeting hello; greeting hello; greeting LATE=set after; greeting OWN=own; greeting FROM_FILE=from the file; greeting hello');
  });
});
