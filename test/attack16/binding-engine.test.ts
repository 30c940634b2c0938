import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { markerText, outsideSharedLibrary, templateCall } from '../attack13/loader-session.js';
import { HOSTILE } from './session.js';

// ATTACK (module guard, native code): the guard wraps crypto.setEngine, the JavaScript function, but node 20 and
// 22 still serve the native binding behind it to anyone, unflagged: process.binding('crypto') (deprecated,
// DEP0111, a warning only) is internalBinding('crypto'), whose setEngine(path, flags) makes OpenSSL dlopen any
// library as a "dynamic" engine. Its constructors run; the call then fails (no engine in it) and the server
// catches that and answers. node 24 no longer serves process.binding('crypto').
// Asserts the secure behaviour: the outside library's code does not run and the server is ended.

const BINDING_NODES = GUARD_NODES.filter(([label]) => !label.startsWith('node 24'));

const tmp = perTestDirs();

describe.each(BINDING_NODES)("process.binding('crypto'), on %s", (_label, node) => {
  it("ends a server that loads an outside shared library as an OpenSSL engine through process.binding('crypto').setEngine, before its code runs", async () => {
    const marker = path.join(tmp.dir, 'marker');
    const lib = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/engine.so'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'bindingengine', { path: lib });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('binding setEngine returned');
    expect(r.code).toBe(3);
    expect(r.refused).toHaveLength(1);
  });
});
