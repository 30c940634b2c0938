import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES, IN_THREAD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { loaderCall, markerText, outsideEsm } from '../attack13/loader-session.js';
import { layoutHostile } from './session.js';

// ATTACK (module guard, require(esm): node 20.19+ unflagged): require() of an ES module of the set (checked by
// Module.prototype.load) links and evaluates its static imports synchronously in the ES loader of the main
// thread, without the module.register hooks, which on node 20 are the guard's only check of ES modules (they run
// on their own thread and see async loads only). A file outside the set imported by an attested ES module that
// the server require()s runs. node 22 and 24 (module.registerHooks, in the loading thread) refuse it; node 20
// now runs with require(esm) off (docs/adr/0049-require-esm-on-node-20.md): node throws ERR_REQUIRE_ESM to the
// server, which goes on (the refusal where a server turns it back on: test/attest/require-esm-dependency.test.ts).
// Asserts the secure behaviour: the outside module does not run; where require(esm) is on, the server is ended.

const tmp = perTestDirs();

describe.each(GUARD_NODES)('require(esm), on %s', (label, node) => {
  it('runs no file outside the set that a require()d module of its set imports statically: the server is ended (node 20: node refuses the require)', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'elsewhere/outside.mjs'), marker);
    const server = layoutHostile(tmp.dir, { 'lib/inner.mjs': `export { description } from ${JSON.stringify(outside)};\n` });
    const r = await loaderCall(tmp.home, node, server, 'requireesm', { file: path.join(path.dirname(server), '../lib/inner.mjs') });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('module outside');
    if (IN_THREAD_NODES.some(([l]) => l === label)) {
      expect(r.code).toBe(3);
      expect(r.refused).toHaveLength(1);
    } else {
      expect(r.answer).toContain('loaded: require returned (ERR_REQUIRE_ESM)');
      expect(r.code).toBe(0);
      expect(r.refused).toEqual([]);
    }
  });
});
