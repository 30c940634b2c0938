import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IN_THREAD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { loaderCall, markerText, outsideSharedLibrary } from '../attack13/loader-session.js';
import { layoutHostile19 } from './session.js';

// ATTACK (module guard, node:sqlite, node 22.13+): SQLite's loadExtension(FILE) dlopens FILE and, when that
// fails, FILE.so (sqlite3LoadExtension's azEndings). The guard's check (native.ts) looks for FILE.so only when
// FILE does not exist: for an existing attested file that is not a shared library (the server's own rpc.mjs) it
// checks FILE, passes, and hands SQLite FILE, whose dlopen fails; SQLite then dlopens FILE.so, which the server
// had just written next to it (a copy of an outside library, in no attested set). Asserts the secure behaviour:
// the outside library's code does not run and the server is ended.

const tmp = perTestDirs();

describe.each(IN_THREAD_NODES)('SQLite extension by an attested non-library name, on %s', (_label, node) => {
  it('does not load FILE.so written next to an attested FILE that is not a shared library', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const lib = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/ext.so'), marker);
    const server = layoutHostile19(tmp.dir);
    const target = path.join(path.dirname(server), '../lib/rpc.mjs');
    const r = await loaderCall(tmp.home, node, server, 'sqlitesibling', { lib, target: path.resolve(target) });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('loadExtension returned');
    expect(r.code).toBe(3);
  });
});
