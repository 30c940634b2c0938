import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { markerText, outsideSharedLibrary, templateCall } from '../attack13/loader-session.js';
import { HOSTILE } from './session.js';

// ATTACK (module guard, native code): OpenSSL loads an engine, a shared library, by path with its own dlopen (its
// DSO "dynamic" engine), which node reaches unflagged from crypto.setEngine(path) and from a TLS context's
// privateKeyEngine / clientCertEngine options. The guard wraps only process.dlopen (and SQLite's loadExtension),
// so a library from anywhere is loaded into the server's process and its constructors run; the call then fails
// (no engine in it) and the server catches that and answers. On node 20, 22 and 24.
// Asserts the secure behaviour: the outside library's code does not run and the server is ended.

const tmp = perTestDirs();

describe.each(GUARD_NODES)('OpenSSL engines, on %s', (_label, node) => {
  it('ends a server that loads a shared library outside its attested set as an OpenSSL engine with crypto.setEngine, before its code runs', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const lib = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/engine.so'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'setengine', { path: lib });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('setEngine returned');
    expect(r.code).toBe(3);
    expect(r.refused).toHaveLength(1);
  });

  it("ends a server that loads a shared library outside its attested set as a TLS context's privateKeyEngine, before its code runs", async () => {
    const marker = path.join(tmp.dir, 'marker');
    const lib = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/engine.so'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'tlsengine', { path: lib });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('createSecureContext returned');
    expect(r.code).toBe(3);
    expect(r.refused).toHaveLength(1);
  });
});
