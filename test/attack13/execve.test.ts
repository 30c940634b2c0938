import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IN_THREAD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { LOADER, markerText, outsideEsm, templateCall } from './loader-session.js';

// ATTACK (module guard, node 22.15+/23.11+): process.execve replaces the server's own process image. The
// warden's child keeps its pid, its stdio and its exe (the same node), but the new image is a node started
// without --import of the guard: it runs a file from outside the attested set, and anything that file imports.
// node 20 has no process.execve. Asserts the secure behaviour: the outside file never runs and the server is
// ended (the warden's run exits 3).

const tmp = perTestDirs();

describe.each(IN_THREAD_NODES)('process.execve, on %s', (_label, node) => {
  it('ends a server that execs node on a file outside its attested set with process.execve, before the file runs', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'elsewhere/after-exec.mjs'), marker);
    const r = await templateCall(tmp.home, node, LOADER, 'execve', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.code).toBe(3);
  });
});
