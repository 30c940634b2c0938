import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES, IN_THREAD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { markerText, outsideCjs, outsideSharedLibrary, templateCall } from '../attack13/loader-session.js';
import { HOSTILE } from './session.js';

// ATTACK (module guard, every way it checks a name): the guard resolves a name with fs.realpathSync, which (like
// path.resolve, which the SQLite and OpenSSL checks also use) first drops "dir/.." as text, and only then
// follows symlinks. The kernel follows "dir" first and takes ".." from where it leads. So in a scratch directory
// of its own the server makes A/link -> OUTSIDE/sub and A/x -> a file of its attested set, and loads
// A/link/../x: the guard sees A/x, resolves it to the attested file (unchanged) and allows it; node, dlopen,
// SQLite or OpenSSL then open OUTSIDE/x. Deterministic, no race. On node 20, 22 and 24.
// Asserts the secure behaviour: the outside file's code does not run and the server is ended.

const tmp = perTestDirs();

describe.each(GUARD_NODES)('names with "symlink/.." in them, on %s', (_label, node) => {
  it('ends a server that loads an outside CommonJS file as A/link/../x.cjs, where A/x.cjs links to an attested file', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideCjs(path.join(tmp.dir, 'elsewhere/x.cjs'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'dotdotcjs', { work: path.join(tmp.dir, 'scratch'), path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('module outside');
    expect(r.code).toBe(3);
    expect(r.refused).toHaveLength(1);
  });

  it('ends a server that process.dlopen()s an outside shared library as A/link/../lib.so, where A/lib.so links to an attested file', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const lib = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/lib.so'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'dotdotdlopen', { work: path.join(tmp.dir, 'scratch'), path: lib });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('dlopen returned');
    expect(r.code).toBe(3);
    expect(r.refused).toHaveLength(1);
  });

  it('ends a server that loads an outside shared library as an OpenSSL engine named A/link/../engine.so (crypto.setEngine)', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const lib = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/engine.so'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'dotdotengine', { work: path.join(tmp.dir, 'scratch'), path: lib });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('setEngine returned');
    expect(r.code).toBe(3);
    expect(r.refused).toHaveLength(1);
  });
});

describe.each(IN_THREAD_NODES)('names with "symlink/.." in them, node:sqlite, on %s', (_label, node) => {
  it('ends a server that loads an outside shared library as a SQLite extension named A/link/../ext.so', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const lib = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/ext.so'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'dotdotsqlite', { work: path.join(tmp.dir, 'scratch'), path: lib });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('loadExtension returned');
    expect(r.code).toBe(3);
    expect(r.refused).toHaveLength(1);
  });
});
