import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { LOADER, markerText, outsideCjs, outsideEsm, templateCall } from './loader-session.js';

// ATTACK (module guard, worker threads): the guard wraps worker_threads.Worker (GuardedWorker) to refuse a
// worker from code to eval (it runs without the guard's --import) and an execArgv beyond the process's own.
// Three ways past the wrapper, on node 20, 22 and 24:
//  - options.eval as a getter: false when the guard reads it, true when node does;
//  - the class the guard wrapped is GuardedWorker's prototype: new (Object.getPrototypeOf(Worker))(code,
//    { eval: true }) is node's own Worker, unchecked;
//  - an execArgv array whose own find() finds nothing: the guard checks with find(), then spreads the array,
//    so "--require FILE" reaches the worker, where --require runs before the guard's --import;
//  - no trick at all: env: { NODE_OPTIONS: '--require FILE' }. node applies NODE_OPTIONS from a worker's env
//    option, and the guard looks only at execArgv.
// Asserts the secure behaviour: the outside file does not run and the server is ended.

const tmp = perTestDirs();

describe.each(GUARD_NODES)('worker options past the guard\'s Worker wrapper, on %s', (_label, node) => {
  it('ends a server that starts an eval worker through an eval option read as false by the guard, before the worker imports an outside file', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'elsewhere/late.mjs'), marker);
    const r = await templateCall(tmp.home, node, LOADER, 'evalgetter', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('worker loaded it');
    expect(r.code).toBe(3);
  });

  it("ends a server that starts an eval worker with node's own Worker class (the wrapper's prototype), before the worker imports an outside file", async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'elsewhere/late.mjs'), marker);
    const r = await templateCall(tmp.home, node, LOADER, 'baseworker', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('worker loaded it');
    expect(r.code).toBe(3);
  });

  it('ends a server whose worker execArgv hides --require of an outside file from the check, before the file runs', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideCjs(path.join(tmp.dir, 'elsewhere/pre.cjs'), marker);
    const r = await templateCall(tmp.home, node, LOADER, 'execargv', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('worker started');
    expect(r.code).toBe(3);
  });

  it('ends a server that gives a worker a NODE_COMPILE_CACHE of its own in its env option', async () => {
    const r = await templateCall(tmp.home, node, LOADER, 'workercache', { path: path.join(tmp.dir, 'elsewhere/cache') });
    expect(r.answer).not.toContain('worker started');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("tried to load a worker thread with NODE_COMPILE_CACHE=");
  });

  it('ends a server that gives a worker NODE_OPTIONS with --require of an outside file in its env option, before the file runs', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideCjs(path.join(tmp.dir, 'elsewhere/pre.cjs'), marker);
    const r = await templateCall(tmp.home, node, LOADER, 'workerenv', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('worker started');
    expect(r.code).toBe(3);
  });
});
