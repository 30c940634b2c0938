import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES, IN_THREAD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { LOADER, markerText, outsideCjs, outsideEsm, templateCall } from './loader-session.js';

// ATTACK (module guard): a refusal ends the server with process.exit(77), called where the load was asked
// for. process.exit emits 'exit' before it ends the process, and a listener that throws makes process.exit
// throw instead: the exception leaves the guard, the load fails with it, and the server catches it and goes
// on serving (resetting process._exiting, it survives every later refusal too). With the in-thread load hook
// (node 22.15+) this holds for import(); on node 20 import() was refused on the loader thread, whose exit the
// server's listener cannot stop. require() is refused in the server's thread on every node. The file itself
// does not run. Asserts the secure behaviour: the server is ended, it does not answer the call.

const tmp = perTestDirs();

describe.each(IN_THREAD_NODES)('a refused import() with a throwing exit listener, on %s', (_label, node) => {
  it('ends a server that catches the refusal of an import outside its set, instead of letting it answer', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'elsewhere/late.mjs'), marker);
    const r = await templateCall(tmp.home, node, LOADER, 'survive', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.refused).toEqual([expect.objectContaining({ module: outside })]);
    expect(r.answer).not.toContain('survived the refusal');
    expect(r.code).toBe(3);
    expect(r.serverExit).toBe(77);
  });
});

describe.each(GUARD_NODES)('a refused require() with a throwing exit listener, on %s', (_label, node) => {
  it('ends a server that catches the refusal of a require outside its set, instead of letting it answer', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideCjs(path.join(tmp.dir, 'elsewhere/late.cjs'), marker);
    const r = await templateCall(tmp.home, node, LOADER, 'survivereq', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('survived the refusal');
    expect(r.code).toBe(3);
    expect(r.serverExit).toBe(77);
  });
});
