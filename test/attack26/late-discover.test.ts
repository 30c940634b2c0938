import path from 'node:path';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, RawSession, SERVERS, addServer, tempDir } from '../helpers/warden.js';
import { MARKER, answerTo, modernLine } from '../attack27/helpers.js';

// Issue 26, fourth closing review: a client that probes server/discover and falls back to initialize on the same
// connection before the probe is answered (the SDK v2 client's auto mode against a server that is slow to answer
// the probe). The connection becomes 2025 (era.ts), and the server answers the probe AFTER its initialize result:
// the discover result (instructions, serverInfo, capabilities) goes down the 2025 path (methodRule
// 'warden_answers', not a judged page) and reaches the client unjudged.

let dir: string;
let home: string;
beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  addServer(home, 'late', [NODE, path.join(SERVERS, 'attack26/late-discover.mjs')]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const initialize = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n';

describe('a server/discover answered after the fallback initialize', () => {
  it('never reaches the client as an unjudged result', async () => {
    const s = new RawSession(home, 'late');
    try {
      s.send(modernLine(1, 'server/discover'));
      s.send(initialize(2));
      expect((await answerTo(s, 2)).result).toBeDefined();
      const probe = await answerTo(s, 1);
      expect(JSON.stringify(probe)).not.toContain(MARKER);
    } finally {
      s.close();
      await s.exited;
    }
  });
});
