import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES, IN_THREAD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { layoutServerPackage, loaderTemplate, markerText, outsideCjs, outsideEsm, templateCall } from '../attack13/loader-session.js';

// ATTACK (module guard, JavaScript's built-ins): the guard's decision (guard.ts) runs in the server's own realm at
// each load and calls built-in methods as they are then: String.prototype.startsWith in url(), Map.prototype.get
// on its set in file(). A server that replaces one of them, a line of code, has the guard decide for a file from
// outside the package as for one of its own: an ES import (checked in the server's own thread on node 22.15+) taken
// for a "node:" built-in; a require() (checked in the server's thread on every node) answered with the stat key the
// file has now. node's own loaders call copies taken before any user code runs (primordials) for this reason.
// Asserts the secure behaviour: the outside module does not run, the server does not get its exports.

const tmp = perTestDirs();

const INTRINSICS = loaderTemplate('attack32-intrinsics', (dir) => layoutServerPackage(dir, { name: 'attack32-intrinsics', server: 'attack32/intrinsics.mjs' }));

describe.each(IN_THREAD_NODES)('String.prototype.startsWith replaced by the server, on %s', (_label, node) => {
  it('does not let the server import an ES module from outside the package that the replaced method says is a node: built-in', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'outside/outside.mjs'), marker);
    const r = await templateCall(tmp.home, node, INTRINSICS, 'startswith', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('imported outside');
  });
});

describe.each(GUARD_NODES)('Map.prototype.get replaced by the server, on %s', (_label, node) => {
  it('does not let the server require a file from outside the package for which the replaced method answers its stat key', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideCjs(path.join(tmp.dir, 'outside/outside.cjs'), marker);
    const r = await templateCall(tmp.home, node, INTRINSICS, 'mapget', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('required outside');
  });
});
