import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES, IN_THREAD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { layoutServerPackage, loaderTemplate, markerText, outsideCjs, outsideEsm, templateCall } from '../attack13/loader-session.js';

// ATTACK (module guard, node's own functions): guard.ts takes fs's functions when it is loaded, "so a server
// replacing fs.realpathSync or fs.lstatSync later does not change what the guard sees", but it imports
// fileURLToPath by name from node:url, and an ES module's named import of a built-in is a live binding: node
// points it at the module's current export whenever anyone calls module.syncBuiltinESMExports() (a public API).
// A server that replaces node:url's fileURLToPath with one that answers, for one outside URL, the path of a file of
// its attested set, and syncs, has the guard check that file while node loads the URL as it is. On node 22 and 24,
// where the guard's ES hook runs in the server's own thread (on node 20 it runs on the loader-hooks thread, whose
// node:url the server's code does not reach).
// So does preload.ts's named import of MessageChannel, with which it makes the channel that carries the set to
// node's loader-hooks thread when the server first registers hooks (node 22.15+): a channel of the server's own
// hands that thread a learn-mode set, and the hooks module loads from outside the package.
// The same holds for workers.ts's named import of node:worker_threads' SHARE_ENV: replaced by an env object of the
// server's own, that object is taken for SHARE_ENV (the environment store is checked, and the object handed to
// node as it is), and node reads NODE_OPTIONS from it, whose --require runs in the worker before the guard's
// --import. On node 20, 22 and 24.
// Asserts the secure behaviour: the outside module does not run, the server does not get its exports.

const tmp = perTestDirs();

const LIE = loaderTemplate('attack32-builtin-lie', (dir) =>
  layoutServerPackage(dir, { name: 'attack32-builtin-lie', server: 'attack32/builtin-lie.mjs', copies: { 'lib/idle-worker.mjs': 'attack13/idle-worker.mjs' } }),
);

describe.each(IN_THREAD_NODES)("node:url's fileURLToPath replaced and synced into the guard's named import, on %s", (_label, node) => {
  it('does not let the server import an ES module from outside the package whose URL the replaced function maps to a file of its attested set', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'outside/outside.mjs'), marker);
    const r = await templateCall(tmp.home, node, LIE, 'urllie', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('imported outside');
  });

  // preload.ts's named import of MessageChannel: the channel that carries the attested set to node's loader-hooks
  // thread is made when the server first calls module.register.
  it("does not load a hooks module from outside the package on node's loader-hooks thread after the server replaced the MessageChannel that carries the set there", async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'outside/outside.mjs'), marker);
    const r = await templateCall(tmp.home, node, LIE, 'channellie', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('loaded: registered');
  });
});

describe.each(GUARD_NODES)("node:worker_threads' SHARE_ENV replaced and synced into the guard's named import, on %s", (_label, node) => {
  it("does not run a --require file from outside the package named in NODE_OPTIONS of a worker's env object the replaced SHARE_ENV is", async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideCjs(path.join(tmp.dir, 'outside/outside.cjs'), marker);
    const r = await templateCall(tmp.home, node, LIE, 'sharelie', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('worker posted worker started');
  });
});
