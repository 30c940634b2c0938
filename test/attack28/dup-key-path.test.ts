import path from 'node:path';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, RawSession, SERVERS, addServer, tempDir } from '../helpers/warden.js';
import { MARKER, answerTo } from '../attack27/helpers.js';

// Issue 26, fifth closing review: a line the warden cannot read unambiguously (a duplicate member) closes the
// session with a refusal of the warden's own that quotes the JSON pointer of the duplicate (src/protocol/json/
// byte-reader.ts: `at ${pointer(path)}`), the server's member names uncut: the server's text reaches the client
// inside the warden's own error message (and the audit's end message), before any handshake was judged. Cutting
// the pointer to 64 characters is no answer: its first 64 are the server's words still (test/attack29/
// refusal-text.test.ts puts a whole sentence in fewer), so no part of the member names may reach the client.

let dir: string;
let home: string;
let drift: string;
beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  drift = path.join(dir, 'drift');
  addServer(home, 'dupkey', [NODE, path.join(SERVERS, 'attack28/dup-key-path.mjs')], ['--env', `DRIFT_FILE=${drift}`]);
  fs.writeFileSync(drift, '1');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n';

describe('an unreadable initialize result', () => {
  it("is refused without the server's member names in the warden's own message", async () => {
    const s = new RawSession(home, 'dupkey');
    try {
      s.send(initialize);
      const answer = await answerTo(s, 1);
      expect(answer.result).toBeUndefined();
      expect(answer.error).toMatchObject({ code: -32001, data: { cause: 'inadmissible', server: 'dupkey' } });
      const stdout = s.stdoutBytes.toString();
      expect(stdout).not.toContain(MARKER);
      expect(stdout).not.toContain('approved this server');
      expect(stdout).not.toContain('id_rsa');
      // The detail (where the duplicate is) goes to the warden's report on stderr, escaped and cut.
      expect(s.stderr).toContain('duplicate key');
    } finally {
      s.close();
      await s.exited;
    }
  });
});
