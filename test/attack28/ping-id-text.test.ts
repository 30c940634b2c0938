import path from 'node:path';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, RawSession, SERVERS, addServer, tempDir } from '../helpers/warden.js';
import { MARKER, answerTo, modernLine } from '../attack27/helpers.js';

// Issue 26, fifth closing review: "a server's ping as a bare ping" (docs/threat-model.md) is relayed at once, in
// any state and era, as {"jsonrpc","id","method":"ping"} -- but with the server's own id, which is any JSON
// string up to the line cap. The server's text thus reaches the client before any handshake is judged (on a
// server the lock then refuses), and on a 2026-07-28 probe, where "no request of the server's" is claimed.

let dir: string;
let home: string;
let drift: string;
beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  drift = path.join(dir, 'drift');
  addServer(home, 'pingid', [NODE, path.join(SERVERS, 'attack28/ping-id-text.mjs')], ['--env', `DRIFT_FILE=${drift}`]);
  fs.writeFileSync(drift, '1');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const initialize = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n';

describe("a server's ping", () => {
  it('carries no text of the server\'s to a 2025 client before its (refused) handshake', async () => {
    const s = new RawSession(home, 'pingid');
    try {
      s.send(initialize(1));
      const init = await answerTo(s, 1);
      expect(init.result).toBeUndefined();
      expect(init.error).toEqual({
        code: -32001,
        message: "mcp-warden closed the session: server 'pingid' was refused: its initialize result changed since it was locked (member serverInfo). Run 'mcp-warden status pingid' or 'mcp-warden diff pingid' for details.",
        data: { cause: 'surface_refused', server: 'pingid' },
      });
      expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    } finally {
      s.close();
      await s.exited;
    }
  });

  it('does not reach the client of a server/discover probe (no request of the server\'s on a 2026-07-28 connection)', async () => {
    const s = new RawSession(home, 'pingid');
    try {
      s.send(modernLine(1, 'server/discover'));
      // The server's "method not found", as its code and the warden's sentence (nothing was judged yet).
      expect((await answerTo(s, 1)).error).toEqual({
        code: -32601,
        message: "mcp-warden: server 'pingid' answered this request with an error (code -32601) before its handshake was judged; its message is not relayed (the warden's stderr shows it). Run 'mcp-warden status pingid' or 'mcp-warden diff pingid' for details.",
        data: { server: 'pingid' },
      });
      expect(s.stdoutBytes.toString()).not.toContain('"method":"ping"');
      expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    } finally {
      s.close();
      await s.exited;
    }
  });
});
