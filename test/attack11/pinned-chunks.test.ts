import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handshakePeak } from '../helpers/memory.js';
import { homeTemplate } from '../helpers/template-home.js';
import { NODE, SERVERS, addServer, tempDir } from '../helpers/warden.js';

// ATTACK (memory bound, 743a79e): what waits for the warden's verification is bounded at 32 MiB counted in the
// bytes of the held lines, and since proxy/waiting-message.ts a held message keeps "its bytes" only. But the
// bytes of a line that arrived within one read are a view into that read's buffer (protocol/framing.ts hands
// on `chunk.subarray(...)`), and a view keeps the whole buffer alive: up to 64 KiB for a pipe read. A server
// that writes, before its initialize result, 64 KiB blocks of one short notification (~90 bytes, held) and one
// line of log noise filling the block (not JSON: reported, dropped, counted nowhere) makes every held message
// keep 64 KiB: 8192 blocks hold ~0.7 MiB by the bound's count and ~512 MiB in fact. The bound is not a bound
// on memory: 32 MiB of held notifications would keep ~23 GiB. Asserts the secure behaviour (memory in
// proportion to what is counted, as test/attack10/held-memory and test/attack/held-growth ask).

let dir: string;
let home: string;
let blocksFile: string;
// The server added, naming a file of the test's dir (absent: it reads it only), once; each test gets a copy
// (helpers/template-home.ts).
const template = homeTemplate((d, h) => {
  addServer(h, 'pinned', [NODE, path.join(SERVERS, 'attack11', 'pinned-chunks.mjs')], ['--env', `BLOCKS_FILE=${path.join(d, 'blocks')}`]);
});
beforeEach(() => {
  dir = tempDir();
  blocksFile = path.join(dir, 'blocks');
  home = template.copyTo(dir);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const handshakeWith = (blocks: number): ReturnType<typeof handshakePeak> => {
  fs.writeFileSync(blocksFile, String(blocks));
  return handshakePeak(home, 'pinned');
};

describe('attack11: held messages keep the read buffers they arrived in', () => {
  it('the control: the same 512 MiB of output, all of it log noise, passes in little memory', async () => {
    const { answer, peak } = await handshakeWith(-8192);
    console.log(`control: warden peak RSS ${peak.toFixed(0)} MiB`);
    expect(answer.result).toBeDefined();
    expect(peak).toBeLessThan(250);
  }, 180_000);

  it('holds memory in proportion to the counted bytes when each held notification arrived in a 64 KiB read with log noise', async () => {
    const { answer, peak } = await handshakeWith(8192); // 512 MiB written; ~0.7 MiB of it held by the count
    console.log(`warden peak RSS ${peak.toFixed(0)} MiB while ~0.7 MiB of notifications (by the bound's count) waited for the handshake`);
    expect(answer.result).toBeDefined();
    expect(peak).toBeLessThan(250); // ~575 MiB before a waiting message kept bytes of its own; ~74 MiB after
  }, 180_000);
});
