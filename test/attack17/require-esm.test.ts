import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { loaderCall, markerText, outsideEsm } from '../attack13/loader-session.js';
import { layoutHostile } from './session.js';

// ATTACK (module guard, require(esm): node 20.19+ unflagged): require() of an ES module of the set (checked by
// Module.prototype.load) links and evaluates its static imports synchronously in the ES loader of the main
// thread, without the module.register hooks, which on node 20 are the guard's only check of ES modules (they run
// on their own thread and see async loads only). A file outside the set imported by an attested ES module that
// the server require()s runs. node 22 and 24 (module.registerHooks, in the loading thread) refuse it.
// Asserts the secure behaviour: the outside module does not run and the server is ended.

const tmp = perTestDirs();

describe.each(GUARD_NODES)('require(esm), on %s', (_label, node) => {
  it('ends a server that require()s a module of its set whose static import is outside its set, before that code runs', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'elsewhere/outside.mjs'), marker);
    const server = layoutHostile(tmp.dir, { 'lib/inner.mjs': `export { description } from ${JSON.stringify(outside)};\n` });
    const r = await loaderCall(tmp.home, node, server, 'requireesm', { file: path.join(path.dirname(server), '../lib/inner.mjs') });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('module outside');
    expect(r.code).toBe(3);
    expect(r.refused).toHaveLength(1);
  });
});
