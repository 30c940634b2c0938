import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handshakePeak } from '../helpers/memory.js';
import { homeTemplate } from '../helpers/template-home.js';
import { NODE, SERVERS, addServer, tempDir } from '../helpers/warden.js';

// ATTACK (memory bound): what waits for the warden's verification is bounded at 32 MiB (docs/adr/0012), counted
// in the bytes of the lines. But a held server message is kept classified: its whole parsed value (a Map per
// object, an array per array) stays in memory beside its bytes, and dense JSON parses to ~70 times its size
// (`[{}]` elements: ~300 MiB of heap a 4 MiB line, measured in process). A server that writes 16 MiB of such
// notifications before its initialize result makes the warden hold over 1 GiB (28 MiB: 2.3 GiB measured) while it judges the handshake,
// with every line well under the line cap and the total under the bound. (Control, measured: the same 16 MiB
// relayed after the handshake, not held, peaks at ~350 MiB, the garbage of parsing it; held: ~1.3 GiB.) Asserts the secure behaviour (memory
// held in proportion to the bound, as test/attack/held-growth.test.ts asks of a flood of ordinary lines);
// failed on the build it was written against (proxy/waiting-message.ts is the fix).

let dir: string;
let home: string;
let denseFile: string;
// The server added, naming a file of the test's dir (absent: it reads it only), once; each test gets a copy
// (helpers/template-home.ts).
const template = homeTemplate((d, h) => {
  addServer(h, 'dense', [NODE, path.join(SERVERS, 'attack10', 'dense-before-init.mjs')], ['--env', `DENSE_FILE=${path.join(d, 'dense-lines')}`]);
});
beforeEach(() => {
  dir = tempDir();
  denseFile = path.join(dir, 'dense-lines');
  home = template.copyTo(dir);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('attack10: memory held before the initialize result', () => {
  it('holds memory in proportion to the 32 MiB bound when the held lines are dense JSON (16 lines of 1 MiB of [{}])', async () => {
    // The lock was made with no flood; the session's server floods (16 lines: 16 MiB, half the bound).
    fs.writeFileSync(denseFile, '16');
    const { answer, peak } = await handshakePeak(home, 'dense');
    console.log(`warden peak RSS ${peak.toFixed(0)} MiB while 16 MiB of dense notifications waited for the handshake`);
    expect(answer.result).toBeDefined();
    expect(peak).toBeLessThan(600); // ~1.3 GiB before waiting messages kept their bytes only; ~330 MiB after
  }, 120_000);

  it('counts each held message at its bytes and the objects that carry it: a million of the shortest notifications close the session within the bound', async () => {
    // 30 MiB of {"jsonrpc":"2.0","method":"n"} lines: under the 32 MiB bound by their bytes, ~600 MiB of objects held.
    fs.writeFileSync(denseFile, 'tiny 1000000');
    const { answer, peak } = await handshakePeak(home, 'dense');
    console.log(`warden peak RSS ${peak.toFixed(0)} MiB while a million short notifications waited for the handshake`);
    expect(answer.error).toMatchObject({ message: expect.stringMatching(/more than 33554432 bytes that had to wait/) });
    expect(peak).toBeLessThan(250);
  }, 120_000);
});
