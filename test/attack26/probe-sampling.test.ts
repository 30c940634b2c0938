import path from 'node:path';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, RawSession, SERVERS, addServer, tempDir } from '../helpers/warden.js';
import { MARKER, answerTo, modernLine, parsed } from '../attack27/helpers.js';

// Issue 26, fourth closing review: on a 2025 connection, what the server says on its own before the handshake is
// held, and released only once the initialize result is proven (dropped when the server is refused). A client
// that first probes server/discover (SDK v2 auto mode) and falls back to initialize opens the probe era, where
// the server's requests are relayed at once: a sampling/createMessage of a server the lock then refuses reaches
// the client, before any surface was judged.

let dir: string;
let home: string;
let drift: string;
beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  drift = path.join(dir, 'drift');
  addServer(home, 'sampler', [NODE, path.join(SERVERS, 'attack26/probe-sampler.mjs')], ['--env', `DRIFT_FILE=${drift}`]);
  fs.writeFileSync(drift, '1');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const initialize = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { sampling: {} }, clientInfo: { name: 'raw', version: '1' } } }) + '\n';

describe('a probe that falls back to initialize', () => {
  it('shows the client nothing the server asks before its (refused) handshake', async () => {
    const s = new RawSession(home, 'sampler');
    try {
      s.send(modernLine(1, 'server/discover'));
      expect((await answerTo(s, 1)).error).toBeDefined();
      s.send(initialize(2));
      const init = await answerTo(s, 2);
      expect(init.result).toBeUndefined();
      expect(JSON.stringify(init.error)).toContain('surface_refused');
      expect(parsed(s).filter((m) => m.method === 'sampling/createMessage')).toEqual([]);
      expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    } finally {
      s.close();
      await s.exited;
    }
  });
});
