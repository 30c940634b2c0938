import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IN_THREAD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { LOADER, markerText, outsideSharedLibrary, templateCall } from './loader-session.js';

// ATTACK (module guard, node 22.13+): node:sqlite is built in and unflagged, and a DatabaseSync opened with
// { allowExtension: true } loads a SQLite extension by path with loadExtension(): a shared library from
// anywhere is dlopen'ed into the server's process (its constructors run at once) without process.dlopen, which
// is the only native loading the guard patches. node 20 has no node:sqlite. Asserts the secure behaviour: a
// library outside the attested set is not loaded and the server is ended.

const tmp = perTestDirs();

describe.each(IN_THREAD_NODES)('node:sqlite extensions, on %s', (_label, node) => {
  it('ends a server that loads a shared library outside its attested set as a SQLite extension, before its code runs', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const lib = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/ext.so'), marker);
    const r = await templateCall(tmp.home, node, LOADER, 'sqlite', { path: lib });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('extension loaded');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`tried to load ${lib}, which is outside its attested set`);
  });
});
