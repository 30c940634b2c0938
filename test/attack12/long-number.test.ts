import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, tempDir } from '../helpers/warden.js';

// ATTACK (CPU): the exact-number digest (protocol/json/number.ts) reduces a number lexeme to its significant
// digits with `digits.replace(/0+$/, '')`. V8's backtracking regexp engine tries `0+$` at every zero of a run
// that a non-zero digit ends, scanning the rest of the run each time: quadratic in the run's length. A schema
// number `1.000…0001` is a valid JSON number (the double 1), its canonical tool is a few dozen bytes, and every
// cap (line 4 MiB, tool 1 MiB canonical, surface 16 MiB) is far away. admitTool reduces it twice (the RFC 8785
// pass finds it inexact, the exact pass), the tool's print again. Measured in process: 16,000 zeros 0.7 s
// (admit) + 0.8 s (print); 32,000: 2.3 + 2.5 s; 64,000: 10.3 + 10.7 s. Extrapolated: a 1 MiB number ~1.5 h,
// a 4 MiB line a day, every second of it with the warden's only thread blocked (no request timeout fires, no
// other message is relayed). Reached by the warden's own handshake listing (before the client is answered), by
// every re-list, by every client tools/list page, and out of band by `verify`/`diff`/`lock` and the daemon's
// scheduled checks. Asserts the secure behaviour: the handshake is judged in about the time of a control whose
// number has as many zeros, none after them (linear: `0+$` matches at the first zero).

let dir: string;
let home: string;
let zerosFile: string;
beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  zerosFile = path.join(dir, 'zeros');
  addServer(home, 'long-number', [NODE, path.join(SERVERS, 'attack12', 'long-number.mjs')], ['--env', `ZEROS_FILE=${zerosFile}`]);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Milliseconds from the client's initialize to its answer (the warden's listing is judged in between). */
async function handshakeMs(zeros: number): Promise<{ ms: number; answer: Record<string, unknown> }> {
  fs.writeFileSync(zerosFile, String(zeros));
  const s = new RawSession(home, 'long-number');
  const t = performance.now();
  s.send(INITIALIZE + '\n');
  const answer = await s.message(1);
  const ms = performance.now() - t;
  s.close();
  await s.exited;
  return { ms, answer };
}

describe('attack12: a long number in a listed schema', () => {
  it('judges a schema number of 32,000 digits in about the time of the control, not quadratic time', async () => {
    const control = await handshakeMs(-32_000);
    const attack = await handshakeMs(32_000);
    console.log(`handshake: control (32,000 trailing zeros) ${control.ms.toFixed(0)} ms; 1.000…0001 (32,000 zeros) ${attack.ms.toFixed(0)} ms`);
    expect(control.answer.result).toBeDefined();
    expect(attack.answer.id).toBe(1);
    expect(attack.ms).toBeLessThan(control.ms + 1000);
  }, 60_000);
});
