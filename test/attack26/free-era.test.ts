import path from 'node:path';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, RawSession, SERVERS, addServer, cli, tempDir } from '../helpers/warden.js';
import { MARKER, answerTo } from '../attack27/helpers.js';

// Issue 26, fourth closing review: `protocolVersion` is judged apart from the handshake print as "the era", and
// an era that differs is only reported, in every posture. But the member is any string: a server locked honest
// later answers initialize with a protocolVersion of free text, which reaches the client in enforce, unjudged,
// and is printed on the warden's stderr unquoted and uncut (judge.ts: "negotiated revision <it>, locked under").

let dir: string;
let home: string;
beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  const drift = path.join(dir, 'drift');
  addServer(home, 'era', [NODE, path.join(SERVERS, 'attack26/free-era.mjs')], ['--env', `DRIFT_FILE=${drift}`]);
  fs.writeFileSync(drift, '1');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n';

describe('a protocolVersion that is not a revision', () => {
  it('does not reach the client in enforce, nor the stderr report as written', async () => {
    const v = cli(home, ['verify', 'era']);
    expect(v.code).toBe(5);
    expect(v.stdout).toContain(`era: SURFACE_INADMISSIBLE: server 'era' served a tool surface that cannot be admitted: "protocolVersion" is not a revision date (YYYY-MM-DD)`);
    expect(v.stdout + v.stderr).not.toContain(MARKER);
    const s = new RawSession(home, 'era');
    try {
      s.send(initialize);
      const answer = await answerTo(s, 1);
      expect(JSON.stringify(answer)).not.toContain(MARKER);
      expect(s.stderr).not.toContain('mcp-warden: server verified');
    } finally {
      s.close();
      await s.exited;
    }
  });
});
