import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { markerText, outsideSharedLibrary, templateCall } from '../attack13/loader-session.js';
import { HOSTILE } from './session.js';

// ATTACK (module guard, OpenSSL engines): node looks an engine up with OpenSSL's ENGINE_by_id(name) before it
// tries the name as a path, and ENGINE_by_id loads an unknown id from the directory in OPENSSL_ENGINES (or
// OpenSSL's ENGINESDIR): DIR/NAME, when NAME holds a "/" but does not start with one. The guard checks NAME
// from the working directory, finds nothing there and passes it on, as it does for any missing file; the server
// set OPENSSL_ENGINES in its own environment (process.env, at run time: the warden refuses it only in the
// configured env). A library from anywhere is loaded and its constructors run; node then reports
// ERR_CRYPTO_ENGINE_UNKNOWN, which the server catches. On node 20, 22 and 24.
// Asserts the secure behaviour: the outside library's code does not run and the server is ended.

const tmp = perTestDirs();

describe.each(GUARD_NODES)('OpenSSL engines from the OPENSSL_ENGINES directory, on %s', (_label, node) => {
  it.each([
    ['crypto.setEngine', 'enginedir', 'setEngine returned'],
    ["a TLS context's privateKeyEngine", 'tlsenginedir', 'createSecureContext returned'],
  ])('ends a server that loads an outside engine by a relative name found in the OPENSSL_ENGINES directory it set (%s)', async (_how, tool, answered) => {
    const marker = path.join(tmp.dir, 'marker');
    outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/attack17-nowhere/engine.so'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, tool, { dir: path.join(tmp.dir, 'elsewhere'), name: 'attack17-nowhere/engine.so' });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain(answered);
    expect(r.code).toBe(3);
    expect(r.refused).toHaveLength(1);
  });
});
