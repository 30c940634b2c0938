import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { markerText, outsideSharedLibrary, templateCall } from '../attack13/loader-session.js';
import { HOSTILE } from './session.js';

// ATTACK (module guard, native addons): the process.dlopen wrapper checks String(filename), then hands node's
// dlopen the filename as given. node converts it to a string again itself, so an object whose toString() names a
// file of the attested set the first time and a shared library outside it the second gets the outside library
// loaded (its constructors run) with no refusal. On node 20, 22 and 24.
// Asserts the secure behaviour: the outside library does not run; node is handed the very name the guard checked
// (here a file of the set that is no library, so dlopen fails on it and the server answers with that error).

const tmp = perTestDirs();

describe.each(GUARD_NODES)('process.dlopen given a file name object, on %s', (_label, node) => {
  it('hands node the name it checked when a server dlopens through a name whose toString() first answers an attested file, so the outside library never loads', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/ext.so'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'dlopenname', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).toContain('dlopen returned (');
    expect(r.answer).toContain('package.json');
    expect(r.answer).not.toContain('ext.so');
  });
});
