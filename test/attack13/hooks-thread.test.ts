import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { LOADER, markerText, outsideCjs, outsideSharedLibrary, templateCall } from './loader-session.js';

// ATTACK (module guard): a server's own module.register puts its hooks (here the package's lib/hooks-thread.mjs,
// attested) on node's loader-hooks thread. The preload never runs on that thread: the guard puts only its
// hooks.js there, which sees ES module loads. require() on that thread goes through an unpatched
// Module.prototype.load (and on node 22.15+ no in-thread hook is registered there either), and process.dlopen
// there is node's own: the hooks load any CommonJS file or native library unchecked, as loaders that
// require() their dependencies (tsx, ts-node) do. On node 20, 22 and 24. Asserts the secure behaviour: the
// file is not loaded and the server is ended.

const tmp = perTestDirs();

describe.each(GUARD_NODES)('the loader-hooks thread of a server\'s own module.register, on %s', (_label, node) => {
  it('ends a server whose loader hooks require() a CommonJS file outside the set, before the file runs', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideCjs(path.join(tmp.dir, 'elsewhere/dep.cjs'), marker);
    const r = await templateCall(tmp.home, node, LOADER, 'hooksrequire', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('registered');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`tried to load ${outside}, which is outside its attested set`);
  });

  it('ends a server whose loader hooks process.dlopen a native library outside the set, before its code runs', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const lib = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/addon.node'), marker);
    const r = await templateCall(tmp.home, node, LOADER, 'hooksdlopen', { path: lib });
    expect(markerText(marker)).toBe('');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`tried to load ${lib}, which is outside its attested set`);
  });
});
