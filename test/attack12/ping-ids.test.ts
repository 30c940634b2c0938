import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { statusMiB } from '../helpers/memory.js';
import { INITIALIZE, NODE, SERVERS, WARDEN, addServer, tempDir } from '../helpers/warden.js';

// ATTACK (memory): a server's ping passes to the client at once and the warden remembers its id until the
// client's pong (proxy/early-pings.ts: `open`, a Set of id texts), so that no request is relayed while one is
// unanswered. The set is emptied only when something waits for it (a request of the client's or the warden's:
// then after 2 s); on an idle session nothing does, and nothing counts it against any bound. A pong settles a
// ping only when its id is, lexeme for lexeme, the ping's: a numeric id the client reads and writes back in its
// own form never settles. The server pings with the id 1.000…0 (~4 MiB of zeros, a different count each time);
// an SDK client reads it as 1 and answers 1; the warden keeps the ~4 MiB lexeme of each. 96 pings while one
// call of the client's waits: ~384 MiB kept (measured: peak ~1 GiB, and the resident size stays there
// after the call is answered), against the control: the same lines, the same numbers in them, as log
// notifications, relayed and not remembered. The 32 MiB bound on what waits for the warden says nothing of it,
// and the server can go on: nothing empties the set while the client is idle. Asserts the secure behaviour: what
// the warden keeps for unanswered pings is bounded (here: within 128 MiB of the control).

const PINGS = 96;

let dir: string;
let home: string;
let pingsFile: string;
beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  pingsFile = path.join(dir, 'pings');
  addServer(home, 'pinger', [NODE, path.join(SERVERS, 'attack12', 'ping-ids.mjs')], ['--env', `PINGS_FILE=${pingsFile}`]);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A client that answers every ping as the MCP SDK's does (the id parsed, written back with JSON.stringify),
 *  calls "flood" once, and reports the warden's memory when the call is answered. */
async function floodedMemory(pings: number): Promise<{ peak: number; rss: number; pongs: number }> {
  fs.writeFileSync(pingsFile, String(pings));
  const proc = spawn(process.execPath, [WARDEN, '--home', home, 'run', 'pinger'], { stdio: ['pipe', 'pipe', 'pipe'] });
  proc.stderr.resume();
  const send = (obj: unknown): boolean => proc.stdin.write(JSON.stringify(obj) + '\n');
  let pongs = 0;
  const done = new Promise<{ peak: number; rss: number }>((resolve, reject) => {
    let parts: Buffer[] = [];
    proc.stdout.on('data', (chunk: Buffer) => {
      let start = 0;
      for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
        parts.push(chunk.subarray(start, nl));
        const msg = JSON.parse(Buffer.concat(parts).toString()) as { id?: unknown; method?: string; result?: unknown };
        parts = [];
        start = nl + 1;
        if (msg.method === 'ping') {
          pongs++;
          send({ jsonrpc: '2.0', id: msg.id, result: {} });
        } else if (msg.id === 1) {
          send({ jsonrpc: '2.0', method: 'notifications/initialized' });
          send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'flood', arguments: {} } });
        } else if (msg.id === 2) {
          const pid = proc.pid as number;
          resolve({ peak: statusMiB(pid, 'VmHWM'), rss: statusMiB(pid, 'VmRSS') });
        }
      }
      if (start < chunk.length) parts.push(chunk.subarray(start));
    });
    proc.once('exit', (code) => reject(new Error(`warden exited ${code} before the call was answered`)));
  });
  proc.stdin.write(INITIALIZE + '\n');
  const memory = await done;
  proc.removeAllListeners('exit');
  const exited = new Promise((r) => proc.once('exit', r));
  proc.stdin.end();
  await exited;
  return { ...memory, pongs };
}

describe('attack12: ping ids the client answers in its own form', () => {
  it('keeps a bounded amount for pings whose ids the client answers as another lexeme of the same number', async () => {
    const control = await floodedMemory(-PINGS);
    const attack = await floodedMemory(PINGS);
    console.log(`control (${PINGS} notifications): warden peak ${control.peak.toFixed(0)} MiB, resident ${control.rss.toFixed(0)} MiB after the call`);
    console.log(`attack (${attack.pongs} pings answered): warden peak ${attack.peak.toFixed(0)} MiB, resident ${attack.rss.toFixed(0)} MiB after the call`);
    expect(control.pongs).toBe(0);
    expect(attack.pongs).toBe(PINGS);
    expect(attack.rss).toBeLessThan(control.rss + 128);
  }, 60_000);
});
