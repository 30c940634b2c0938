import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IN_THREAD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { markerText, outsideSharedLibrary, templateCall } from '../attack13/loader-session.js';
import { HOSTILE } from './session.js';

// ATTACK (module guard, OpenSSL engines, node 22.15+ and 24): the engine checks are installed lazily, on the
// first load of crypto/tls/https/http2 the guard sees (its in-thread load hook, process.getBuiltinModule,
// process.binding('crypto')). Two ways reach an engine without any of those:
//  - fetch(): node's bundled undici loads node:tls with node's internal require, which no hook sees. An undici
//    Agent (the global dispatcher's constructor) with connect.privateKeyEngine makes tls.connect create a
//    context whose native setEngineKey is node's own: OpenSSL dlopens the outside library.
//  - a load hook of the server's own (module.registerHooks runs the last registered first) short-circuits
//    node:crypto as a built-in: node loads the real module, the guard's load hook is never called for it, and
//    crypto.setEngine is node's own.
// Asserts the secure behaviour: the outside library's code does not run and the server is ended.

const tmp = perTestDirs();

describe.each(IN_THREAD_NODES)('OpenSSL engines past the lazy checks, on %s', (_label, node) => {
  it("ends a server that loads an outside engine as the privateKeyEngine of fetch()'s undici connector, with no built-in loaded that reaches engines", async () => {
    const marker = path.join(tmp.dir, 'marker');
    const engine = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/engine.so'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'fetchengine', { path: engine, port: 9 + 44434 });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('fetch returned');
    expect(r.code).toBe(3);
    expect(r.refused).toHaveLength(1);
  });

  it('ends a server that loads an outside engine with crypto.setEngine after its own load hook short-circuited node:crypto past the guard', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const engine = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/engine.so'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'hookskip', { path: engine });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('setEngine returned');
    expect(r.code).toBe(3);
    expect(r.refused).toHaveLength(1);
  });
});
