import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES, IN_THREAD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { markerText, outsideCjs, outsideSharedLibrary, templateCall } from '../attack13/loader-session.js';
import { HOSTILE } from './session.js';

// ATTACK (module guard, every loader it wraps): the guard's file check realpaths the name it is given and, when
// that fails, lets the load go on ("no such file: the loader reports that itself"). A server opens a file it
// wrote outside its set, unlinks it, and loads /proc/self/fd/N: the link reads "/tmp/x (deleted)", so
// fs.realpathSync throws ENOENT and the guard returns, while open() follows the magic link to the file's
// contents. Loaded so: a native library with process.dlopen (node 20, 22, 24), a CommonJS file with
// Module.prototype.load (node 20, 22, 24), a SQLite extension with loadExtension (node 22, 24). Their code runs
// and the server answers. Asserts the secure behaviour: nothing from outside the set runs and the server is ended.

const tmp = perTestDirs();

describe.each(GUARD_NODES)('a file named by /proc/self/fd after it was unlinked, on %s', (_label, node) => {
  it('ends a server that process.dlopens an outside shared library through /proc/self/fd/N of an unlinked copy, before its code runs', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const lib = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/ext.so'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'fddlopen', { path: lib, tmp: path.join(tmp.dir, 'elsewhere/copy.so') });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('dlopen returned');
    expect(r.code).toBe(3);
    expect(r.refused).toHaveLength(1);
  });

  it('ends a server that loads an outside CommonJS file with Module.prototype.load through /proc/self/fd/N of an unlinked copy, before it runs', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const cjs = outsideCjs(path.join(tmp.dir, 'elsewhere/evil.cjs'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'fdload', { path: cjs, tmp: path.join(tmp.dir, 'elsewhere/copy.cjs') });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('module outside');
    expect(r.code).toBe(3);
    expect(r.refused).toHaveLength(1);
  });
});

describe.each(IN_THREAD_NODES)('a SQLite extension named by /proc/self/fd after it was unlinked, on %s', (_label, node) => {
  it('ends a server that loads an outside SQLite extension through /proc/self/fd/N of an unlinked copy, before its code runs', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const lib = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/ext.so'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'fdsqlite', { path: lib, tmp: path.join(tmp.dir, 'elsewhere/copy.so') });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('extension loaded');
    expect(r.code).toBe(3);
    expect(r.refused).toHaveLength(1);
  });
});
