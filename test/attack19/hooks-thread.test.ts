import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { loaderCall, markerText, outsideCjs, outsideEsm, templateCall } from '../attack13/loader-session.js';
import { HOSTILE, layoutHostile19 } from './session.js';

// The loader-hooks thread on node 22.15+/24, which the guard puts its hooks on when a server calls
// module.register (preload.ts guardedRegister; hooks.ts runs guardLoaders there, with extensions: false).
//
// ATTACK: on the main thread of node 22.15+ a direct Module._extensions['.js'](module, file) call is seen by the
// guard's in-thread load hook; on the loader-hooks thread there is no such hook and the handlers are wrapped only
// on node 20, so a hooks file of the server's own package (attested) compiles an outside CommonJS file there.
// Asserts the secure behaviour: the outside file's code does not run and the server is ended.
//
// ATTACK (node 24): require() of an ES module (require(esm)) on the loader-hooks thread: node 20's refusal of it
// (Module.prototype._compile) is wrapped only where there is no in-thread hook, and there is none on that thread
// on node 22/24 either; node 24 loads the attested module's import of an outside ES module past the guard's
// load hook. Asserts that the outside module does not run.
//
// ATTACK: the preload's Worker wrapper (workers.ts), which refuses a worker from code to eval (it would run
// without the guard), is installed by the preload only: hooks.ts does not install it on the loader-hooks thread.
// The server's own hooks file starts an eval worker there, which require()s an outside file unguarded (node 20,
// 22, 24). Asserts the secure behaviour.
//
// FALSE POSITIVE check: a server with a pass-through hooks file of its own (tsx-style) registers it and imports
// one of its own modules: it must be served (guardLoaders loads node:crypto, node:tls, node:sqlite on that thread).

const tmp = perTestDirs();

describe.each(GUARD_NODES)('the loader-hooks thread, on %s', (_label, node) => {
  it("ends a server whose own hooks call Module._extensions['.js'] on an outside file on the loader thread", async () => {
    const marker = path.join(tmp.dir, 'marker');
    const file = outsideCjs(path.join(tmp.dir, 'elsewhere/evil.js'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'hooksext', { file });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('registered');
    expect(r.code).toBe(3);
  });

  it('ends a server whose own hooks start a worker from code to eval on the loader thread', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const file = outsideCjs(path.join(tmp.dir, 'elsewhere/evil.js'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'hookseval', { file });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('registered');
    expect(r.code).toBe(3);
  });

  it('ends a server whose own hooks require() an attested ES module importing an outside one on the loader thread', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'elsewhere/evil.mjs'), marker);
    const server = layoutHostile19(tmp.dir);
    const esm = path.resolve(path.dirname(server), '../lib/imports-outside.mjs');
    fs.writeFileSync(esm, `import { description } from ${JSON.stringify(outside)};\nexport default description;\n`);
    const r = await loaderCall(tmp.home, node, server, 'hooksreqesm', { esm });
    // node 22 throws on this require() there (no outside code runs); node 24 loads the import unchecked
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('registered');
  });

  it('serves a server that registers a pass-through hooks file of its own package', async () => {
    const r = await templateCall(tmp.home, node, HOSTILE, 'hooksplain', {});
    expect(r.stderr).not.toContain('tried to load');
    expect(r.answer).toContain('own module own');
  });
});
