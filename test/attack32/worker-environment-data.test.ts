import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { layoutServerPackage, loaderTemplate, markerText, outsideCjs, outsideEsm, templateCall } from '../attack13/loader-session.js';

// ATTACK (module guard, worker threads): a worker's module guard takes its attested set from the worker's
// environment data (preload.ts: getEnvironmentData('mcp-warden.attested-set')), which the main thread's preload
// set with setEnvironmentData. That is a public API of node:worker_threads, and nothing keeps the server's own
// code from calling it: a worker gets a copy of its creator's environment data when it is constructed. An
// attested server that writes a well-formed set there (learn mode, or its own set with one more file and the stat
// key that file has now) and then starts an ordinary worker of its own package has that worker import a file from
// outside the package. test/attack2/module-guard.test.ts "overwrites the worker environment data" passes only
// because its forged set has no `keys` member, so isGuardState refuses it (worker exit 77); a set with keys
// passes; so does one written on node's loader-hooks thread by the server's own hooks. On node 20, 22 and 24.
// Asserts the secure behaviour: the outside file does not run, the worker does not import it.

const tmp = perTestDirs();

const ENV_DATA = loaderTemplate('attack32-env-data', (dir) =>
  layoutServerPackage(dir, {
    name: 'attack32-env-data',
    server: 'attack32/env-data.mjs',
    copies: { 'lib/load-worker.mjs': 'attack31/load-worker.mjs', 'lib/env-data-hooks.mjs': 'attack32/env-data-hooks.mjs' },
  }),
);

describe.each(GUARD_NODES)("a worker thread's attested set written by the server into the worker environment data, on %s", (_label, node) => {
  for (const tool of ['learnset', 'widenedset'] as const) {
    it(`does not let a worker import a file from outside the package after the server set a ${tool === 'learnset' ? 'learn-mode set' : 'set widened by that file'} with setEnvironmentData`, async () => {
      const marker = path.join(tmp.dir, 'marker');
      const outside = outsideEsm(path.join(tmp.dir, 'outside/outside.mjs'), marker);
      const r = await templateCall(tmp.home, node, ENV_DATA, tool, { path: outside });
      expect(markerText(marker)).toBe('');
      expect(r.answer).not.toContain('worker imported outside');
    });
  }

  // In the thread that set it, node hands back the very object: the main thread's set is its guard's state.
  for (const how of ['import', 'require'] as const) {
    it(`does not let the server's main thread ${how} a file from outside the package after it set the mode of the set its environment data holds to learn`, async () => {
      const marker = path.join(tmp.dir, 'marker');
      const outside = how === 'import' ? outsideEsm(path.join(tmp.dir, 'outside/outside.mjs'), marker) : outsideCjs(path.join(tmp.dir, 'outside/outside.cjs'), marker);
      const r = await templateCall(tmp.home, node, ENV_DATA, 'learnmain', { path: outside, cjs: how === 'require' });
      expect(markerText(marker)).toBe('');
      expect(r.answer).not.toContain('main imported outside');
    });
  }

  // node's loader-hooks thread (module.register) has environment data of its own, and the server's hooks run there.
  it("does not let a worker started on node's loader-hooks thread import a file from outside the package after the server's hooks set a learn-mode set there", async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'outside/outside.mjs'), marker);
    const r = await templateCall(tmp.home, node, ENV_DATA, 'hooksset', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('worker imported outside');
  });
});
