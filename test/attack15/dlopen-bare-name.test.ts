import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { templateCall } from '../attack13/loader-session.js';
import { HOSTILE } from './session.js';

// ATTACK (module guard, native addons): process.dlopen of a bare library name (no '/'). The guard realpaths it
// against the working directory, finds no such file and lets the call go on ("the loader reports that itself"),
// but dlopen does not look in the working directory for a bare name: it searches the library path (ld.so.cache,
// /lib, /usr/lib) and loads what it finds there, a library outside the attested set (its constructors run). The
// guard's own SQLite wrapper refuses bare names for that very reason; process.dlopen does not. Shown with a system
// library (libutil.so.1, loaded RTLD_NODELETE so that it stays mapped): on node 20, 22 and 24.
// Asserts the secure behaviour: the library is not loaded and the server is ended.

const LIBRARY = 'libutil.so.1';

const tmp = perTestDirs();

describe.each(GUARD_NODES)('process.dlopen of a bare library name, on %s', (_label, node) => {
  it.skipIf(!['/lib', '/usr/lib', '/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu', '/lib64', '/usr/lib64'].some((d) => fs.existsSync(path.join(d, LIBRARY))))(
    'ends a server that process.dlopens a library by bare name, which dlopen finds on the library path outside the attested set',
    async () => {
      const r = await templateCall(tmp.home, node, HOSTILE, 'barename', { name: LIBRARY });
      expect(r.answer).not.toContain('mapped /');
      expect(r.code).toBe(3);
      expect(r.refused).toHaveLength(1);
    },
  );
});
